// The tipqa explorer: a build's questions, their labels and evidence, from files on disk.
// Data files call tipqa.meta / rows / search / details / texts; every element is built with
// createElement and textContent, so text from the corpus is never parsed as HTML, and every
// value shown inside a sentence sits in its own <bdi>, so right-to-left text stays in its box.
// The filters, the search, the sort and the open question live in the URL's fragment.
"use strict";

(function () {
  var ROW_HEIGHT = 28;
  var OVERSCAN = 8;
  var COLUMNS = [
    { key: 0, title: "id" },
    { key: 1, title: "question" },
    { key: 2, title: "answer" },
    { key: 3, title: "pool", code: "pools" },
    { key: 4, title: "label", code: "labels" },
    { key: 5, title: "stage", code: "stages" },
    { key: 6, title: "split", code: "splits" },
    { key: 7, title: "total", numeric: true },
    { key: 8, title: "judged", numeric: true },
  ];
  var MARKS = { audited: 1, found: 2, flipped: 4, disputed: 8 };
  var FILTERS = ["pool", "label", "stage", "split", "audit", "judge", "flip", "search"];
  var state = {
    meta: null,
    rows: [],
    lower: [],
    byId: null,
    rowFiles: 0,
    search: [],
    details: {},
    texts: {},
    shown: new Int32Array(0),
    sort: null,
    active: 0,
    rendered: new Map(),
    view: null,
    question: null,
    pending: null,
    returnTo: null,
    markFrom: null,
    problems: [],
    firstDrawn: false,
  };
  var arrived = {};
  var waiting = {};
  // Natural order: "q2" before "q10", "1" before "100".
  var collator = new Intl.Collator("en", { numeric: true });
  var ID_TAIL = 8;

  // --- small helpers ---

  function byId(id) {
    return document.getElementById(id);
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // A value shown inside text: isolated, so that its direction cannot leak out.
  function value(text, className) {
    return el("bdi", className || null, text === null || text === undefined ? "-" : text);
  }

  // A sentence from parts: strings, and nodes (values) that go in as they are.
  function sentence(tag, className, parts) {
    var node = el(tag, className);
    parts.forEach(function (part) {
      node.appendChild(typeof part === "string" ? document.createTextNode(part) : part);
    });
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function pad(n) {
    return ("0000" + n).slice(-5);
  }

  function setStatus(text) {
    byId("status").textContent = text;
  }

  function code(name, index) {
    if (index === -1 || index === null || index === undefined) return "none";
    return state.meta[name][index];
  }

  function number(x) {
    return x === null || x === undefined ? "-" : Number(x).toLocaleString("en");
  }

  function probability(x) {
    return x === null || x === undefined ? "-" : Number(x).toFixed(3);
  }

  function offsets(start, end) {
    return start === null || start === undefined ? "offsets unknown" : start + "\u2013" + end;
  }

  function plural(n, one, many) {
    return number(n) + " " + (n === 1 ? one : many);
  }

  // --- loading the data files ---

  function loadScript(src) {
    var script = document.createElement("script");
    script.src = src;
    script.onerror = function () {
      setStatus("could not load " + src);
      var loading = byId("question-view").querySelector(".loading");
      if (loading) loading.textContent = "Could not load " + src + ".";
    };
    document.head.appendChild(script);
  }

  // Call `callback` once every file of `sources` has arrived (loading those not asked yet).
  function need(sources, callback) {
    var missing = sources.filter(function (src) {
      return !arrived[src];
    });
    if (!missing.length) return callback();
    var left = missing.length;
    missing.forEach(function (src) {
      if (!waiting[src]) {
        waiting[src] = [];
        loadScript(src);
      }
      waiting[src].push(function () {
        left -= 1;
        if (left === 0) callback();
      });
    });
  }

  function arrive(src) {
    arrived[src] = true;
    var callbacks = waiting[src] || [];
    delete waiting[src];
    callbacks.forEach(function (callback) {
      callback();
    });
  }

  function source(kind, index) {
    return "data/" + kind + "-" + pad(index) + ".js";
  }

  function meta(data) {
    state.meta = data;
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", start);
    } else {
      start();
    }
  }

  function rows(index, chunk) {
    for (var i = 0; i < chunk.length; i++) {
      var row = chunk[i];
      state.rows.push(row);
      state.lower.push((row[0] + "\u0000" + row[1] + "\u0000" + row[2]).toLowerCase());
    }
    state.rowFiles += 1;
    state.byId = null;
    arrive(source("rows", index));
    applyFilters();
    if (state.rowFiles < state.meta.row_files) {
      loadScript(source("rows", state.rowFiles));
      setStatus("loaded " + number(state.rows.length) + " of " + number(state.meta.questions));
    } else {
      setStatus(number(state.rows.length) + " questions");
      window.tipqaAllRows = performance.now();
      if (state.pending !== null) openQuestion(state.pending);
      loadSearch(0);
    }
  }

  // The search data (aliases, keywords, documents) once the table is there, file by file.
  function loadSearch(index) {
    if (index >= state.meta.row_files) {
      window.tipqaSearchReady = performance.now();
      return;
    }
    need([source("search", index)], function () {
      if (byId("f-search").value.trim()) applyFilters();
      loadSearch(index + 1);
    });
  }

  function search(index, data) {
    var documents = data.documents.map(function (d) {
      return String(d).toLowerCase();
    });
    var lower = data.rows.map(function (entry) {
      return entry[0].concat(entry[1]).join("\u0000").toLowerCase();
    });
    state.search[index] = { documents: documents, rows: data.rows, lower: lower };
    arrive(source("search", index));
  }

  function details(index, questions) {
    state.details[index] = questions;
    arrive(source("details", index));
  }

  function texts(index, strings) {
    state.texts[index] = strings;
    arrive(source("texts", index));
  }

  function textFile(id) {
    var starts = state.meta.text_files;
    var low = 0;
    var high = starts.length - 1;
    while (low < high) {
      var middle = (low + high + 1) >> 1;
      if (starts[middle] <= id) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  function text(id) {
    var file = textFile(id);
    return state.texts[file][id - state.meta.text_files[file]];
  }

  // --- the URL's fragment ---

  function params() {
    var hash = location.hash.slice(1);
    if (hash === "build") hash = "view=build";
    return new URLSearchParams(hash);
  }

  function currentParams(question) {
    var out = new URLSearchParams();
    FILTERS.forEach(function (name) {
      var control = byId("f-" + name);
      var v = control.value.trim();
      if (v) out.set(name, v);
    });
    if (state.sort) {
      out.set("sort", COLUMNS[state.sort.key].title);
      if (state.sort.descending) out.set("order", "descending");
    }
    if (question !== undefined && question !== null) out.set("q", question);
    return out;
  }

  function hashFor(question) {
    var text = currentParams(question).toString();
    return "#" + text;
  }

  function writeURL() {
    if (state.view !== "table") return;
    var target = hashFor(null);
    if (location.hash !== target && !(location.hash === "" && target === "#")) {
      history.replaceState(null, "", target);
    }
  }

  // Set the controls from the fragment; true when anything changed. A value the build does not
  // have is said above the table (`showProblems`), and that filter shows everything.
  function readFilters(p) {
    var changed = false;
    var problems = [];
    FILTERS.forEach(function (name) {
      var control = byId("f-" + name);
      var wanted = p.get(name) || "";
      if (control.tagName === "SELECT") {
        var known = Array.prototype.some.call(control.options, function (o) {
          return o.value === wanted;
        });
        if (!known || (wanted && control.parentNode.hidden)) {
          if (wanted) problems.push([name, wanted, "the list is not filtered by " + name]);
          wanted = "";
        }
      }
      if (control.value !== wanted) {
        control.value = wanted;
        changed = true;
      }
    });
    var sort = null;
    var key = COLUMNS.findIndex(function (c) {
      return c.title === p.get("sort");
    });
    if (key === -1 && p.get("sort")) {
      problems.push(["sort", p.get("sort"), "the list is in the build's order"]);
    }
    var order = p.get("order");
    if (order && order !== "descending" && order !== "ascending") {
      problems.push(["order", order, "the order is ascending"]);
    }
    if (key !== -1) sort = { key: key, descending: order === "descending" };
    state.problems = problems;
    showProblems();
    if (JSON.stringify(sort) !== JSON.stringify(state.sort)) {
      state.sort = sort;
      showSort();
      changed = true;
    }
    return changed;
  }

  // --- the filters and the table ---

  function fillSelect(id, options) {
    var select = byId(id);
    select.appendChild(el("option", null, "all")).value = "";
    options.forEach(function (option) {
      var node = select.appendChild(el("option", null, option[1]));
      node.value = option[0];
    });
    select.addEventListener("change", changed);
  }

  function named(names) {
    return names.map(function (name) {
      return [name, name];
    });
  }

  function changed() {
    state.problems = [];
    showProblems();
    applyFilters();
    writeURL();
  }

  // What this link asked for that the build does not have, and what is shown instead.
  function showProblems() {
    var note = byId("link-problem");
    clear(note);
    note.hidden = !state.problems.length;
    state.problems.forEach(function (problem, i) {
      if (i) note.appendChild(document.createTextNode(" "));
      note.appendChild(
        sentence("span", null, [
          "This link\u2019s " + problem[0] + " ",
          value("\u201c" + problem[1] + "\u201d"),
          " is not in this build, so " + problem[2] + ".",
        ])
      );
    });
  }

  function start() {
    var m = state.meta;
    byId("title").textContent = "tipqa explorer: " + m.build;
    document.title = "tipqa explorer: " + m.build;
    fillSelect("f-pool", named(m.pools));
    fillSelect("f-label", named(m.labels));
    fillSelect("f-stage", named(m.stages));
    fillSelect("f-split", named(m.splits.concat(["none"])));
    fillSelect("f-audit", [
      ["audited", "audited"],
      ["found", "found by the audit"],
    ]);
    fillSelect("f-flip", [["flipped", "flipped against " + (m.compare ? m.compare.other : "")]]);
    fillSelect("f-judge", [["disputed", "disputed by the second judge"]]);
    byId("f-audit").parentNode.hidden = !Object.keys(m.audit).length;
    byId("f-judge").parentNode.hidden = !judgeAudited();
    byId("f-flip").parentNode.hidden = !m.compare;
    var timer = null;
    byId("f-search").addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(changed, 150);
    });
    byId("filters").addEventListener("submit", function (event) {
      event.preventDefault();
    });
    byId("export-jsonl").addEventListener("click", function () {
      download("jsonl");
    });
    byId("export-csv").addEventListener("click", function () {
      download("csv");
    });
    var head = byId("grid-head");
    COLUMNS.forEach(function (column) {
      var cell = el("div", "c-" + column.title);
      cell.setAttribute("role", "columnheader");
      cell.setAttribute("aria-sort", "none");
      var button = el("button", "sort", column.title);
      button.type = "button";
      // the arrow is drawn, not read: the header's name stays the column's, aria-sort says
      // the order
      button.appendChild(el("span", "arrow")).setAttribute("aria-hidden", "true");
      button.addEventListener("click", function () {
        sortBy(column.key);
      });
      cell.appendChild(button);
      head.appendChild(cell);
    });
    var grid = byId("grid");
    grid.addEventListener("scroll", scrolled);
    byId("grid-space").addEventListener("keydown", keyed);
    byId("grid-space").addEventListener("click", clicked);
    // The table's scroll box fills the window below the filters (CSS: body.table-mode), so the
    // page itself does not scroll; whenever its size changes, the rows are drawn again and the
    // focused row is kept in view.
    new ResizeObserver(resized).observe(grid);
    window.addEventListener("hashchange", route);
    window.addEventListener("resize", function () {
      if (state.view === "question" && state.unfold) state.unfold();
    });
    route();
    if (m.questions === 0) {
      setStatus("no questions in this build");
      window.tipqaFirstRows = window.tipqaAllRows = window.tipqaSearchReady = performance.now();
    } else {
      loadScript(source("rows", 0));
      setStatus("loading questions");
    }
  }

  // Whether a pool's audit has a judge audit (a second judge's figures and disputes).
  function judgeAudited() {
    if (state.judged === undefined) {
      var audits = state.meta.audit;
      state.judged = Object.keys(audits).some(function (pool) {
        return Boolean(audits[pool].judge_audit);
      });
    }
    return state.judged;
  }

  function selected(id, names) {
    var v = byId(id).value;
    if (!v) return null;
    if (names === null) return v;
    var index = names.indexOf(v);
    return index === -1 && v === "none" ? -1 : index;
  }

  function searchHit(needle) {
    // Per search file: the documents whose id holds the needle.
    return state.search.map(function (file) {
      if (!file) return null;
      var hits = new Uint8Array(file.documents.length);
      for (var j = 0; j < hits.length; j++) {
        if (file.documents[j].indexOf(needle) !== -1) hits[j] = 1;
      }
      return hits;
    });
  }

  function matchesSearch(i, needle, hits) {
    if (state.lower[i].indexOf(needle) !== -1) return true;
    var perFile = state.meta.rows_per_file;
    var file = state.search[Math.floor(i / perFile)];
    if (!file) return false;
    var at = i % perFile;
    if (file.lower[at].indexOf(needle) !== -1) return true;
    var documents = file.rows[at][2];
    var fileHits = hits[Math.floor(i / perFile)];
    for (var j = 0; j < documents.length; j++) {
      if (fileHits[documents[j]]) return true;
    }
    return false;
  }

  function applyFilters() {
    var m = state.meta;
    var pool = selected("f-pool", m.pools);
    var label = selected("f-label", m.labels);
    var stage = selected("f-stage", m.stages);
    var split = selected("f-split", m.splits);
    var audit = selected("f-audit", null);
    var judge = selected("f-judge", null);
    var flip = selected("f-flip", null);
    var needle = byId("f-search").value.trim().toLowerCase();
    var hits = needle ? searchHit(needle) : null;
    var out = new Int32Array(state.rows.length);
    var n = 0;
    for (var i = 0; i < state.rows.length; i++) {
      var row = state.rows[i];
      if (pool !== null && row[3] !== pool) continue;
      if (label !== null && row[4] !== label) continue;
      if (stage !== null && row[5] !== stage) continue;
      if (split !== null && row[6] !== split) continue;
      if (audit !== null && !(row[9] & MARKS[audit])) continue;
      if (judge !== null && !(row[9] & MARKS.disputed)) continue;
      if (flip !== null && !(row[9] & MARKS.flipped)) continue;
      if (needle && !matchesSearch(i, needle, hits)) continue;
      out[n++] = i;
    }
    var activeIndex = state.shown.length > state.active ? state.shown[state.active] : -1;
    state.shown = out.subarray(0, n);
    if (state.sort) sortShown();
    var position = state.shown.indexOf(activeIndex);
    state.active = position === -1 ? 0 : position;
    var loading = state.search.filter(Boolean).length < m.row_files && needle;
    byId("shown").textContent =
      number(n) +
      " of " +
      number(state.rows.length) +
      " shown" +
      (loading ? " (aliases, keywords and documents still loading)" : "");
    showNothing(n, needle, loading);
    var grid = byId("grid");
    var focused = grid.contains(document.activeElement) && document.activeElement.dataset.position;
    grid.setAttribute("aria-rowcount", String(n + 1));
    // a few pixels below the last row: a scroll box of fractional height still shows it whole
    byId("grid-space").style.height = n * ROW_HEIGHT + (n ? 4 : 0) + "px";
    clearRows();
    draw();
    if (focused && state.rendered.has(state.active)) {
      state.rendered.get(state.active).focus({ preventScroll: true });
    }
  }

  // The message in place of the rows when none is shown: what found nothing, what to do.
  function showNothing(n, needle, loading) {
    var note = byId("nothing");
    var filtered = FILTERS.some(function (name) {
      return name !== "search" && byId("f-" + name).value;
    });
    note.hidden = n > 0 || !state.rows.length;
    clear(note);
    if (!note.hidden) {
      var parts = needle ? ["No question matches the search ", value(needle)] : ["No question"];
      if (filtered) parts.push(needle ? " with these filters" : " matches these filters");
      parts.push(
        loading
          ? " yet: aliases, keywords and documents are still loading."
          : needle
            ? " (ids, questions, answers, aliases, keywords and judged documents' ids)."
            : "."
      );
      note.appendChild(sentence("span", null, parts));
      var reset = el("button", "reset", "Show every question");
      reset.type = "button";
      reset.addEventListener("click", function () {
        FILTERS.forEach(function (name) {
          byId("f-" + name).value = "";
        });
        changed();
        byId("f-search").focus();
      });
      note.appendChild(document.createTextNode(" "));
      note.appendChild(reset);
    }
  }

  function sortValue(row, key) {
    var column = COLUMNS[key];
    return column.code ? code(column.code, row[key]) : row[key];
  }

  function sortShown() {
    var key = state.sort.key;
    var sign = state.sort.descending ? -1 : 1;
    var numeric = COLUMNS[key].numeric;
    var shown = Array.prototype.slice.call(state.shown);
    var values = {};
    shown.forEach(function (i) {
      values[i] = sortValue(state.rows[i], key);
    });
    shown.sort(function (a, b) {
      var x = values[a];
      var y = values[b];
      if (x === y) return a - b;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      var order = numeric ? x - y : collator.compare(String(x), String(y));
      return order === 0 ? a - b : sign * order;
    });
    state.shown = Int32Array.from(shown);
  }

  function showSort() {
    var cells = byId("grid-head").children;
    Array.prototype.forEach.call(cells, function (cell, key) {
      var on = state.sort !== null && state.sort.key === key;
      var order = on ? (state.sort.descending ? "descending" : "ascending") : "none";
      cell.setAttribute("aria-sort", order);
      cell.firstChild.className = "sort" + (on ? " sorted " + order : "");
    });
  }

  function sortBy(key) {
    if (state.sort && state.sort.key === key) {
      state.sort.descending = !state.sort.descending;
    } else {
      state.sort = { key: key, descending: false };
    }
    showSort();
    changed();
  }

  function headHeight() {
    return byId("grid-head").offsetHeight;
  }

  // The positions of the rows wholly in view: [first, last].
  function inView() {
    var grid = byId("grid");
    var top = grid.scrollTop;
    var height = grid.clientHeight - headHeight();
    var first = Math.ceil(top / ROW_HEIGHT);
    var last = Math.floor((top + height) / ROW_HEIGHT) - 1;
    return [first, Math.max(first, Math.min(last, state.shown.length - 1))];
  }

  function clearRows() {
    state.rendered.clear();
    clear(byId("grid-space"));
  }

  function draw() {
    state.frame = null;
    if (state.view !== "table") return;
    var grid = byId("grid");
    var space = byId("grid-space");
    var top = grid.scrollTop;
    var first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    var last = Math.min(
      state.shown.length,
      Math.ceil((top + grid.clientHeight) / ROW_HEIGHT) + OVERSCAN
    );
    var wanted = new Set();
    for (var p = first; p < last; p++) wanted.add(p);
    if (state.active < state.shown.length) wanted.add(state.active);
    state.rendered.forEach(function (node, position) {
      if (!wanted.has(position)) {
        space.removeChild(node);
        state.rendered.delete(position);
      }
    });
    wanted.forEach(function (position) {
      var node = state.rendered.get(position);
      if (!node) {
        node = drawRow(state.shown[position], position);
        state.rendered.set(position, node);
        space.appendChild(node);
      }
      node.tabIndex = position === state.active ? 0 : -1;
    });
    if (!state.firstDrawn && last > first) {
      state.firstDrawn = true;
      window.tipqaFirstRows = performance.now();
    }
  }

  // An id as its head, cut with an ellipsis where the column is too narrow, and its last
  // characters, always shown: ids that share a long prefix stay told apart.
  function idParts(id) {
    var points = Array.from(String(id));
    if (points.length <= ID_TAIL + 2) return [points.join(""), ""];
    return [points.slice(0, -ID_TAIL).join(""), points.slice(-ID_TAIL).join("")];
  }

  function drawRow(index, position) {
    var row = state.rows[index];
    var line = el("div", "grid-row label-" + code("labels", row[4]));
    line.setAttribute("role", "row");
    line.setAttribute("aria-rowindex", String(position + 2));
    line.dataset.position = String(position);
    line.style.top = position * ROW_HEIGHT + "px";
    COLUMNS.forEach(function (column) {
      var v = row[column.key];
      if (column.code) v = code(column.code, v);
      else if (column.numeric) v = number(v);
      var cell = el("span", "c-" + column.title + (column.numeric ? " num" : ""));
      cell.setAttribute("role", "gridcell");
      if (column.key === 0) {
        var link = el("a");
        var split = idParts(v);
        link.appendChild(el("span", "id-head", split[0]));
        if (split[1]) link.appendChild(el("span", "id-tail", split[1]));
        link.href = hashFor(row[0]);
        link.tabIndex = -1;
        cell.appendChild(link);
      } else {
        cell.textContent = String(v);
      }
      cell.title = String(v);
      line.appendChild(cell);
    });
    return line;
  }

  function resized() {
    if (state.view !== "table") return;
    var grid = byId("grid");
    if (grid.contains(document.activeElement) && state.active < state.shown.length) {
      ensureVisible(state.active);
    }
    draw();
  }

  function scrolled() {
    var grid = byId("grid");
    if (!grid.contains(document.activeElement) && state.shown.length) {
      var view = inView();
      if (state.active < view[0] || state.active > view[1]) state.active = view[0];
    }
    if (!state.frame) state.frame = requestAnimationFrame(draw);
  }

  function ensureVisible(position) {
    var grid = byId("grid");
    var height = grid.clientHeight - headHeight();
    var y = position * ROW_HEIGHT;
    if (y < grid.scrollTop) grid.scrollTop = y;
    else if (y + ROW_HEIGHT > grid.scrollTop + height) grid.scrollTop = y + ROW_HEIGHT - height;
  }

  function moveTo(position) {
    if (!state.shown.length) return;
    state.active = Math.max(0, Math.min(state.shown.length - 1, position));
    ensureVisible(state.active);
    draw();
    state.rendered.get(state.active).focus({ preventScroll: true });
  }

  function openPosition(position) {
    location.hash = hashFor(state.rows[state.shown[position]][0]);
  }

  function keyed(event) {
    var row = event.target.closest("[role=row]");
    if (!row) return;
    var position = Number(row.dataset.position);
    var page = Math.max(1, Math.floor((byId("grid").clientHeight - headHeight()) / ROW_HEIGHT) - 1);
    var moves = {
      ArrowDown: position + 1,
      ArrowUp: position - 1,
      PageDown: position + page,
      PageUp: position - page,
      Home: 0,
      End: state.shown.length - 1,
    };
    if (event.key in moves) {
      event.preventDefault();
      moveTo(moves[event.key]);
    } else if (event.key === "Enter") {
      event.preventDefault();
      openPosition(position);
    }
  }

  function clicked(event) {
    var row = event.target.closest("[role=row]");
    if (!row || event.target.closest("a")) return;
    openPosition(Number(row.dataset.position));
  }

  // --- export of the list as shown ---

  function exportFields() {
    var names = ["id", "question", "answer", "pool", "label", "stage", "split", "total", "judged"];
    if (Object.keys(state.meta.audit).length) names.push("audit");
    if (judgeAudited()) names.push("disputed");
    if (state.meta.compare) names.push("flipped");
    return names;
  }

  function rowRecord(row) {
    return {
      id: row[0],
      question: row[1],
      answer: row[2],
      pool: code("pools", row[3]),
      label: code("labels", row[4]),
      stage: code("stages", row[5]),
      split: row[6] === -1 ? null : state.meta.splits[row[6]],
      total: row[7],
      judged: row[8],
    };
  }

  function exportRecord(row) {
    var record = rowRecord(row);
    if (Object.keys(state.meta.audit).length) {
      record.audit = row[9] & MARKS.found ? "found" : row[9] & MARKS.audited ? "audited" : null;
    }
    if (judgeAudited()) record.disputed = Boolean(row[9] & MARKS.disputed);
    if (state.meta.compare) record.flipped = Boolean(row[9] & MARKS.flipped);
    return record;
  }

  // A CSV cell: a text a spreadsheet would read as a formula (one that starts with =, +, -, @,
  // a tab or a carriage return: OWASP's CSV injection rule) gets a leading apostrophe, so it
  // stays text, quoted as the rule says; numbers stay numbers.
  function csvCell(v) {
    if (v === null || v === undefined) return "";
    var s = String(v);
    var formula = typeof v === "string" && /^[=+\-@\t\r]/.test(s);
    if (formula) s = "'" + s;
    return formula || /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }

  function exported(format) {
    var fields = exportFields();
    var lines = [];
    if (format === "csv") lines.push(fields.join(","));
    for (var p = 0; p < state.shown.length; p++) {
      var record = exportRecord(state.rows[state.shown[p]]);
      if (format === "csv") {
        lines.push(
          fields
            .map(function (f) {
              return csvCell(record[f]);
            })
            .join(",")
        );
      } else {
        lines.push(JSON.stringify(record));
      }
    }
    return (
      lines.join(format === "csv" ? "\r\n" : "\n") +
      (lines.length ? (format === "csv" ? "\r\n" : "\n") : "")
    );
  }

  function download(format) {
    var type = format === "csv" ? "text/csv" : "application/x-ndjson";
    // the CSV starts with a UTF-8 byte-order mark, so that spreadsheets read it as UTF-8
    var body = (format === "csv" ? "\ufeff" : "") + exported(format);
    var blob = new Blob([body], { type: type + ";charset=utf-8" });
    var link = el("a");
    link.href = URL.createObjectURL(blob);
    link.download = state.meta.build.replace(/[^A-Za-z0-9._-]/g, "_") + "-questions." + format;
    document.body.appendChild(link);
    link.click();
    document.body.removeChild(link);
    setTimeout(function () {
      URL.revokeObjectURL(link.href);
    }, 60000);
    setStatus(
      "exported " +
        plural(state.shown.length, "question", "questions") +
        " as " +
        format.toUpperCase()
    );
  }

  // --- routing ---

  function show(view) {
    state.view = view;
    document.body.classList.toggle("table-mode", view === "table");
    ["table", "question", "build"].forEach(function (name) {
      byId(name + "-view").hidden = name !== view;
    });
  }

  function route() {
    var p = params();
    if (readFilters(p) && state.meta) applyFilters();
    var leaving = state.view === "question" ? state.question : null;
    if (p.has("q")) {
      state.cameFromTable = state.view === "table";
      show("question");
      openQuestion(p.get("q"));
    } else if (p.get("view") === "build") {
      show("build");
      state.question = null;
      document.title = "the build \u00b7 tipqa explorer: " + state.meta.build;
      drawBuild();
    } else {
      show("table");
      state.question = null;
      document.title = "tipqa explorer: " + state.meta.build;
      draw();
      if (leaving !== null) returnToRow(leaving);
    }
  }

  function returnToRow(id) {
    var index = rowIndexOf(id);
    var position = index === undefined ? -1 : state.shown.indexOf(index);
    if (position !== -1) moveTo(position);
  }

  function rowIndexOf(id) {
    if (!state.byId) {
      state.byId = new Map();
      state.rows.forEach(function (row, i) {
        state.byId.set(row[0], i);
      });
    }
    return state.byId.get(id);
  }

  // --- a question's page ---

  function unpack(fields, values) {
    var object = {};
    fields.forEach(function (name, i) {
      object[name] = i < values.length ? values[i] : null;
    });
    return object;
  }

  function question(index, page, entry) {
    var row = state.rows[index];
    var f = state.meta.fields;
    var q = Object.assign(rowRecord(row), {
      index: index,
      aliases: entry[0],
      keywords: entry[1],
      extracted: page.extracted === undefined ? entry[1] : page.extracted,
      reason: page.reason,
      why: page.why,
      evidence: page.evidence,
      audit: page.audit || null,
      second: page.second_judge || null,
      flip: page.flip || null,
    });
    q.token = page.token.map(function (d) {
      var document = unpack(f.document, d);
      document.windows = document.windows.map(function (w) {
        return unpack(f.window, w);
      });
      document.qrel = document.windows.some(accepted)
        ? 1
        : 0;
      return document;
    });
    var relevant = {};
    q.vector = page.vector.map(function (c) {
      var chunk = unpack(f.chunk, c);
      if (chunk.chunk.charAt(0) === "#") chunk.chunk = chunk.doc + chunk.chunk;
      if (accepted(chunk)) relevant[chunk.doc] = true;
      return chunk;
    });
    q.vector.forEach(function (chunk) {
      chunk.qrel = chunk.verdict === null ? null : relevant[chunk.doc] ? 1 : 0;
    });
    return q;
  }

  // Whether the build acts on a unit's "yes": its judge's, confirmed where a confirming judge
  // ([judge.confirm]) was asked.
  function accepted(unit) {
    return unit.verdict === "yes" && (!unit.confirmed || unit.confirmed === "yes");
  }

  // Every text file a question's page needs.
  function textSources(q) {
    var files = {};
    function add(ref) {
      if (!ref) return;
      (ref[2] || []).forEach(function (piece) {
        files[textFile(piece[1])] = true;
      });
      if (ref[3]) files[textFile(ref[3][0])] = true;
      (ref[5] || []).forEach(function (id) {
        files[textFile(id)] = true;
      });
    }
    q.token.forEach(function (d) {
      d.windows.forEach(function (w) {
        add(w.text);
      });
    });
    q.vector.forEach(function (c) {
      add(c.text);
    });
    if (q.audit && q.audit.found && q.audit.found.evidence) add(q.audit.found.evidence.text);
    if (q.second && q.second.evidence) add(q.second.evidence.text);
    if (q.flip) {
      ["a", "b"].forEach(function (side) {
        if (q.flip[side].evidence) add(q.flip[side].evidence.text);
      });
    }
    return Object.keys(files).map(function (file) {
      return source("texts", Number(file));
    });
  }

  function openQuestion(id) {
    var view = byId("question-view");
    clear(view);
    state.question = id;
    state.pending = null;
    state.markFrom = null;
    document.title = "question " + id + " \u00b7 tipqa explorer";
    var index = rowIndexOf(id);
    if (index === undefined) {
      var done = state.rowFiles >= state.meta.row_files;
      view.appendChild(backLink());
      if (!done) state.pending = id;
      var missing = view.appendChild(
        done
          ? sentence("p", "note", ["No question ", value(id), " in this build."])
          : el("p", "note loading", "Loading\u2026")
      );
      missing.tabIndex = -1;
      missing.focus();
      return;
    }
    view.appendChild(el("p", "note loading", "Loading the question\u2026"));
    var file = Math.floor(index / state.meta.details_per_file);
    var searchFile = Math.floor(index / state.meta.rows_per_file);
    need([source("details", file), source("search", searchFile)], function () {
      if (state.question !== id) return;
      var entry = state.search[searchFile].rows[index % state.meta.rows_per_file];
      var q = question(index, state.details[file][id], entry);
      need(textSources(q), function () {
        if (state.question === id) drawQuestion(view, q);
      });
    });
  }

  function backLink() {
    var back = el("a", "back", "\u2190 all questions");
    back.href = hashFor(null);
    back.addEventListener("click", function (event) {
      if (state.cameFromTable) {
        event.preventDefault();
        history.back();
      }
    });
    return back;
  }

  function questionNav(q) {
    var nav = el("nav", "question-nav");
    nav.setAttribute("aria-label", "questions of this list");
    nav.appendChild(backLink());
    var position = state.shown.indexOf(q.index);
    if (position === -1) {
      nav.appendChild(el("span", "note", "not in the list as filtered"));
      return nav;
    }
    function step(delta, label) {
      var target = position + delta;
      if (target < 0 || target >= state.shown.length) return el("span", "disabled", label);
      var link = el("a", null, label);
      link.href = hashFor(state.rows[state.shown[target]][0]);
      link.rel = delta < 0 ? "prev" : "next";
      return link;
    }
    nav.appendChild(step(-1, "\u2190 previous"));
    nav.appendChild(
      el("span", "position", number(position + 1) + " of " + number(state.shown.length))
    );
    nav.appendChild(step(1, "next \u2192"));
    return nav;
  }

  // The marked text of a string: text nodes, aliases and keywords in <mark> elements.
  function marked(node, string, marks) {
    var at = 0;
    for (var i = 0; i + 2 < (marks || []).length; i += 3) {
      node.appendChild(document.createTextNode(string.slice(at, marks[i])));
      var mark = el(
        "mark",
        marks[i + 2] === 0 ? "alias" : "keyword",
        string.slice(marks[i], marks[i + 1])
      );
      node.appendChild(mark);
      at = marks[i + 1];
    }
    node.appendChild(document.createTextNode(string.slice(at)));
    return node;
  }

  // A text reference as pieces {offset, string, marks}: the excerpts, or the whole text.
  function pieces(ref, folded) {
    if (ref[2]) {
      return ref[2].map(function (p) {
        return { offset: p[0], string: text(p[1]), marks: p[2] };
      });
    }
    var whole = text(ref[3][0]);
    var marks = ref[3][1];
    if (!folded || !ref[4]) return [{ offset: 0, string: whole, marks: marks }];
    return ref[4].map(function (span) {
      var inside = [];
      for (var i = 0; i + 2 < marks.length; i += 3) {
        if (marks[i] >= span[0] && marks[i + 1] <= span[1]) {
          inside.push(marks[i] - span[0], marks[i + 1] - span[0], marks[i + 2]);
        }
      }
      return { offset: span[0], string: whole.slice(span[0], span[1]), marks: inside };
    });
  }

  function gap(n) {
    return el("span", "gap", "\u2026 " + plural(n, "character", "characters") + " \u2026");
  }

  function textBlock(ref, folded) {
    var block = el("div", "text");
    block.dir = "auto";
    var at = 0;
    pieces(ref, folded).forEach(function (piece) {
      if (piece.offset > at) block.appendChild(gap(piece.offset - at));
      marked(block, piece.string, piece.marks);
      at = piece.offset + piece.string.length;
    });
    if (at < ref[0]) block.appendChild(gap(ref[0] - at));
    return block;
  }

  function toggle(label, other, onChange) {
    var button = el("button", "toggle", label);
    button.type = "button";
    button.setAttribute("aria-pressed", "false");
    button.addEventListener("click", function () {
      var on = button.getAttribute("aria-pressed") !== "true";
      button.setAttribute("aria-pressed", String(on));
      button.textContent = on ? other : label;
      onChange(on);
    });
    return button;
  }

  // A window's, chunk's or evidence's text: folded to its matches, the whole one click away,
  // and the document around it where the page has it.
  function unitText(ref, noun) {
    var box = el("div", "unit-text");
    var folded = textBlock(ref, true);
    box.appendChild(folded);
    var tools = el("div", "tools");
    if (ref[3] && ref[4]) {
      var whole = null;
      tools.appendChild(
        toggle(
          "Show the whole " + noun + " (" + plural(ref[0], "character", "characters") + ")",
          "Fold to the matches",
          function (on) {
            if (!whole) {
              whole = textBlock(ref, false);
              whole.classList.add("whole");
              box.insertBefore(whole, folded);
            }
            whole.hidden = !on;
            folded.hidden = on;
          }
        )
      );
    }
    if (ref[5]) {
      var before = el("div", "context before");
      var after = el("div", "context after");
      before.dir = after.dir = "auto";
      before.textContent = "\u2026" + text(ref[5][0]);
      after.textContent = text(ref[5][1]) + "\u2026";
      before.hidden = after.hidden = true;
      box.insertBefore(before, box.firstChild);
      box.appendChild(after);
      tools.appendChild(
        toggle("Show the document around it", "Hide the document around it", function (on) {
          before.hidden = after.hidden = !on;
        })
      );
    }
    if (tools.firstChild) box.appendChild(tools);
    return box;
  }

  function facts(pairs) {
    var list = el("dl", "facts");
    pairs.forEach(function (pair) {
      list.appendChild(el("dt", null, pair[0]));
      var dd = el("dd");
      if (pair[1] instanceof Node) dd.appendChild(pair[1]);
      else dd.appendChild(value(pair[1]));
      list.appendChild(dd);
    });
    return list;
  }

  function chips(values, className) {
    var span = el("span", "chips");
    var shown = 12;
    (values || []).forEach(function (v, i) {
      var chip = el("bdi", "chip " + className, v);
      if (i >= shown) chip.hidden = true;
      span.appendChild(chip);
    });
    if (!values || !values.length) span.textContent = "none";
    if (values && values.length > shown) {
      span.appendChild(
        toggle("all " + number(values.length), "fewer", function (on) {
          Array.prototype.forEach.call(span.querySelectorAll(".chip"), function (chip, i) {
            chip.hidden = !on && i >= shown;
          });
        })
      );
    }
    return span;
  }

  function verdict(v) {
    return el("span", "verdict verdict-" + (v || "none"), v || "not judged");
  }

  function reply(unit) {
    if (unit.verdict === null) return null;
    var said = unit.raw === null ? unit.verdict : unit.raw;
    return sentence("span", "reply", ["judge replied ", value(said === "" ? "(nothing)" : said)]);
  }

  function whyParts(parts) {
    return parts.map(function (part, i) {
      return i % 2 === 0 ? part : value(part, "value");
    });
  }

  function drawQuestion(view, q) {
    clear(view);
    document.title = q.question + " \u00b7 tipqa explorer: " + state.meta.build;
    view.appendChild(questionNav(q));
    var title = el("h2", "question-text", q.question);
    title.id = "question-title";
    title.dir = "auto";
    title.tabIndex = -1;
    view.appendChild(title);
    // a long question is folded to four lines, the whole one a button away (no hover needed):
    // the button is there whenever the fold hides text, at any width
    var unfold = toggle("Show the whole question", "Fold the question", function (on) {
      title.classList.toggle("unfolded", on);
    });
    unfold.classList.add("unfold");
    view.appendChild(unfold);
    state.unfold = function () {
      if (!title.classList.contains("unfolded")) {
        unfold.hidden = title.scrollHeight <= title.clientHeight + 1;
      }
    };
    state.unfold();
    view.appendChild(
      sentence("p", "lead", [
        el("span", "badge label-" + q.label, q.label),
        " decided by the ",
        value(q.stage),
        " stage \u00b7 answer ",
        value(q.answer, "answer"),
      ])
    );
    var order = 0;
    var numbers = {};
    q.token.forEach(function (d) {
      d.windows.forEach(function (w) {
        order += 1;
        numbers[w.unit] = order;
      });
    });
    view.appendChild(whyBox(q, numbers));
    if (q.audit) view.appendChild(auditBox(q));
    if (q.second) view.appendChild(secondJudgeBox(q));
    if (q.flip) view.appendChild(flipBox(q));
    view.appendChild(
      facts([
        ["id", q.id],
        ["aliases", chips(q.aliases, "alias")],
        ["keywords searched", chips(q.keywords, "keyword")],
        ["keywords extracted", chips(q.extracted, "keyword")],
        ["pool / split", q.pool + " / " + (q.split || "none")],
        ["documents matched", number(q.total)],
        ["judgments", number(q.judged)],
      ])
    );
    view.appendChild(tokenSection(q, numbers));
    view.appendChild(vectorSection(q));
    window.scrollTo(0, 0);
    title.focus({ preventScroll: true });
    window.tipqaQuestionDrawn = performance.now();
  }

  function jump(target) {
    for (var node = target.parentNode; node; node = node.parentNode) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    target.scrollIntoView({ block: "center" });
  }

  function whyBox(q, numbers) {
    var box = el("div", "why");
    box.appendChild(el("h3", null, "Why " + q.label));
    box.appendChild(sentence("p", "why-text", whyParts(q.why)));
    var tools = el("div", "tools");
    if (q.evidence) {
      var unit = q.evidence.stage === "token" ? "window #" + numbers[q.evidence.unit] : "chunk";
      var go = el("button", "go-evidence", "Go to the evidence " + unit);
      go.type = "button";
      go.addEventListener("click", function () {
        var target = byId("question-view").querySelector(".evidence-unit");
        if (target) {
          state.markFrom = target;
          jump(target);
          target.focus();
        }
      });
      tools.appendChild(go);
    }
    var counter = el("span", "note mark-count");
    ["Previous highlight", "Next highlight"].forEach(function (label, i) {
      var button = el("button", i ? "next-mark" : "previous-mark", label);
      button.type = "button";
      button.addEventListener("click", function () {
        stepMark(i ? 1 : -1, counter);
      });
      tools.appendChild(button);
    });
    tools.appendChild(counter);
    box.appendChild(tools);
    if (q.evidence) {
      var qrels = sentence("code", "qrels", [value(q.id), " 0 ", value(q.evidence.doc), " 1"]);
      box.appendChild(
        facts([
          ["evidence document", q.evidence.doc],
          [
            "evidence unit",
            sentence("span", null, [value(q.evidence.unit), " (" + q.evidence.stage + " stage)"]),
          ],
          ["qrels line", qrels],
        ])
      );
    }
    box.appendChild(sentence("p", "reason", ["Recorded reason: ", value(q.reason)]));
    return box;
  }

  // The next (delta 1) or previous (-1) highlight shown, in the page's order, from the one
  // last gone to, or from where "Go to the evidence" went, or from the top of the window: a text
  // unfolded or folded in between, or a jump to the evidence, does not send it back to the first.
  function stepMark(delta, counter) {
    var marks = Array.prototype.filter.call(
      byId("question-view").querySelectorAll("mark"),
      function (mark) {
        return !mark.closest("[hidden]");
      }
    );
    if (!marks.length) {
      counter.textContent = "no highlights on this page";
      return;
    }
    var at = markAfter(marks, delta);
    var current = byId("question-view").querySelector("mark.current");
    if (current) current.classList.remove("current");
    var mark = marks[at];
    mark.classList.add("current");
    state.markFrom = mark;
    jump(mark);
    counter.textContent = "highlight " + number(at + 1) + " of " + number(marks.length);
  }

  function markAfter(marks, delta) {
    var from = state.markFrom;
    var i;
    if (from && from.isConnected) {
      var inside = from.tagName !== "MARK";
      // where `from` sits among the marks: the first mark at or after it, in the page's order
      var next = marks.findIndex(function (mark) {
        var position = from.compareDocumentPosition(mark);
        return (
          (inside && position & Node.DOCUMENT_POSITION_CONTAINED_BY) ||
          position & Node.DOCUMENT_POSITION_FOLLOWING
        );
      });
      if (next === -1) next = marks.length;
      var at = marks.indexOf(from);
      if (delta > 0) i = at === -1 ? next : at + 1;
      else i = (at === -1 ? next : at) - 1;
    } else {
      // nothing gone to yet: from the top of the window
      var below = marks.findIndex(function (mark) {
        return mark.getBoundingClientRect().top >= 0;
      });
      if (below === -1) below = marks.length;
      i = delta > 0 ? below : below - 1;
    }
    return (i + marks.length) % marks.length;
  }

  function evidenceFacts(evidence, noun) {
    var box = el("div", "side-evidence");
    var pairs = [
      ["document", evidence.doc_id],
      ["unit", evidence.unit_id],
    ];
    if (evidence.start !== undefined)
      pairs.push(["offsets", offsets(evidence.start, evidence.end)]);
    if (evidence.relaxation) pairs.push(["relaxation", evidence.relaxation]);
    box.appendChild(facts(pairs));
    if (evidence.text) box.appendChild(unitText(evidence.text, noun));
    return box;
  }

  function auditBox(q) {
    var box = el("div", "audit");
    box.appendChild(el("h3", null, "Label audit"));
    var figures = state.meta.audit[q.pool] || {};
    box.appendChild(
      sentence("p", null, [
        "The audit of pool ",
        value(q.pool),
        " judged this question again (labelled ",
        value(q.label),
        ")",
        figures.applied
          ? "; its findings were applied to the labels."
          : "; its findings were not applied to the labels.",
      ])
    );
    var found = q.audit.found;
    if (!found) {
      box.appendChild(el("p", "note", "It found no document that answers it."));
      return box;
    }
    box.appendChild(
      sentence("p", "found", [
        "Found answerable (it was labelled ",
        value(found.label),
        "): cause ",
        value(found.cause),
        ".",
      ])
    );
    if (found.evidence) box.appendChild(evidenceFacts(found.evidence, "audit evidence"));
    return box;
  }

  // A question the judge audit's second judge disputes: both judges' verdicts on the unit it
  // judged otherwise, and that unit.
  function secondJudgeBox(q) {
    var s = q.second;
    var box = el("div", "second-judge");
    box.appendChild(el("h3", null, "Disputed by the second judge"));
    box.appendChild(
      sentence("p", null, [
        "The judge audit's second judge",
        s.judge ? " (" : "",
        s.judge ? value(s.judge) : "",
        s.judge ? ")" : "",
        " disputes the label ",
        el("span", "badge label-" + s.label, s.label),
        ": on ",
        s.label === "answerable" ? "the evidence " : "a unit ",
        value(s.evidence ? s.evidence.unit_id : null),
        " (" + s.stage + " stage) the two judges said otherwise.",
      ])
    );
    var verdicts = el("dl", "facts verdicts");
    [
      ["the build's judge", s.first],
      ["the second judge", s.second],
    ].forEach(function (pair) {
      verdicts.appendChild(el("dt", null, pair[0]));
      verdicts.appendChild(el("dd")).appendChild(verdict(pair[1]));
    });
    box.appendChild(verdicts);
    if (s.evidence) box.appendChild(evidenceFacts(s.evidence, "unit"));
    return box;
  }

  function flipBox(q) {
    var box = el("div", "flip");
    var other = state.meta.compare.other;
    box.appendChild(sentence("h3", null, ["Flipped against ", value(other)]));
    [
      ["a", "this build"],
      ["b", other],
    ].forEach(function (pair) {
      var side = q.flip[pair[0]];
      box.appendChild(
        sentence("p", "side", [
          value(pair[1], "side-name"),
          ": ",
          el("span", "badge label-" + side.label, side.label),
          " by the ",
          value(side.stage),
          " stage \u00b7 ",
          value(side.reason),
        ])
      );
      if (side.evidence) box.appendChild(evidenceFacts(side.evidence, "evidence"));
    });
    return box;
  }

  function textsNote(q) {
    var t = state.meta.texts;
    var all = 0;
    var shown = 0;
    q.token.forEach(function (d) {
      d.windows.forEach(function (w) {
        all += 1;
        if (w.text) shown += 1;
      });
    });
    var why = !t.index
      ? "the page was written without the token index"
      : "at most " + t.per_question + " a question";
    return (
      "Texts of " +
      number(shown) +
      " of " +
      plural(all, "window", "windows") +
      " (" +
      why +
      ")." +
      excerptsNote()
    );
  }

  function excerptsNote() {
    var t = state.meta.texts;
    if (t.whole) return "";
    return (
      " This copy keeps the evidence whole and other texts as excerpts of " +
      t.around +
      " characters around their matches."
    );
  }

  // A judged window or chunk: its line (number, ids, verdict, P(yes), offsets, the judge's
  // reply), its error and its text.
  function unitBox(u, kind, order, ids, extra, isEvidence) {
    var box = el("div", "unit " + kind + (isEvidence ? " evidence-unit" : ""));
    box.tabIndex = -1;
    var line = el("div", "unit-head");
    line.appendChild(el("span", "order", "#" + order));
    ids.forEach(function (pair) {
      line.appendChild(value(pair[0], pair[1]));
    });
    if (extra) line.appendChild(extra);
    line.appendChild(verdict(u.verdict));
    if (u.confirmed) {
      // both verdicts: the confirming judge's on this "yes" of the build's judge
      line.appendChild(
        sentence("span", "confirmation", [
          u.confirmed === "yes" ? "confirmed by " : "not confirmed by ",
          value(u.confirmer),
          ": ",
          verdict(u.confirmed),
        ])
      );
    }
    if (isEvidence) line.appendChild(el("span", "evidence-tag", "the evidence"));
    line.appendChild(el("span", "p-yes", "P(yes) " + probability(u.p_yes)));
    line.appendChild(el("span", "offsets", offsets(u.start, u.end)));
    var said = reply(u);
    if (said) line.appendChild(said);
    box.appendChild(line);
    if (u.error) box.appendChild(sentence("p", "error", ["error: ", value(u.error)]));
    if (u.text) box.appendChild(unitText(u.text, kind));
    return box;
  }

  function windowBox(w, order, evidence, doc) {
    var ids = [[w.unit, "unit-id"]];
    if (doc) ids.unshift([doc, "doc-id"]);
    return unitBox(w, "window", order, ids, null, evidence && evidence.unit === w.unit);
  }

  function documentSummary(d) {
    var verdicts = d.windows.map(function (w) {
      return w.verdict;
    });
    return [
      value(d.doc, "doc-id"),
      el(
        "span",
        "doc-rank",
        "search rank " +
          number(d.rank) +
          ", score " +
          number(d.score) +
          ", qrels relevance " +
          d.qrel
      ),
      el(
        "span",
        "doc-verdicts",
        plural(d.windows.length, "window", "windows") + ": " + verdicts.join(", ")
      ),
    ];
  }

  function tokenSection(q, numbers) {
    var section = el("section", "stage token-stage");
    var windows = Object.keys(numbers).length;
    section.appendChild(
      el(
        "h3",
        null,
        "Token stage: " +
          plural(q.token.length, "document", "documents") +
          ", " +
          plural(windows, "window", "windows") +
          " judged, in judged order"
      )
    );
    if (!q.token.length) {
      section.appendChild(el("p", "note", "No document was judged."));
      return section;
    }
    section.appendChild(el("p", "note", textsNote(q)));
    var bare = [];
    q.token.forEach(function (d) {
      var hasText = d.windows.some(function (w) {
        return w.text;
      });
      if (!hasText) {
        bare.push(d);
        return;
      }
      var box = el("details", "document qrel-" + d.qrel);
      box.open = true;
      var summary = el("summary", "document-head");
      documentSummary(d).forEach(function (node) {
        summary.appendChild(node);
      });
      box.appendChild(summary);
      d.windows.forEach(function (w) {
        box.appendChild(windowBox(w, numbers[w.unit], q.evidence));
      });
      section.appendChild(box);
    });
    if (bare.length) section.appendChild(bareDocuments(bare, numbers, q.evidence));
    return section;
  }

  // The judged documents none of whose windows has its text on the page: one line each.
  function bareDocuments(documents, numbers, evidence) {
    var box = el("details", "bare-documents");
    var count = 0;
    documents.forEach(function (d) {
      count += d.windows.length;
    });
    box.appendChild(
      el(
        "summary",
        null,
        plural(documents.length, "judged document", "judged documents") +
          " without window texts on this page (" +
          plural(count, "window", "windows") +
          ")"
      )
    );
    var list = el("ol", "bare");
    documents.forEach(function (d) {
      d.windows.forEach(function (w) {
        var item = el("li");
        item.appendChild(windowBox(w, numbers[w.unit], evidence, d.doc));
        list.appendChild(item);
      });
    });
    box.appendChild(list);
    return box;
  }

  function vectorSection(q) {
    var section = el("section", "stage vector-stage");
    section.appendChild(
      el(
        "h3",
        null,
        "Vector stage: " + plural(q.vector.length, "chunk", "chunks") + " by similarity"
      )
    );
    if (!q.vector.length)
      section.appendChild(el("p", "note", "The question did not reach the vector stage."));
    else if (excerptsNote()) section.appendChild(el("p", "note", excerptsNote().trim()));
    q.vector.forEach(function (c, i) {
      var ids = [
        [c.chunk, "unit-id"],
        [c.doc, "doc-id"],
      ];
      var similarity = el("span", "similarity", "similarity " + Number(c.score).toFixed(4));
      var isEvidence = q.evidence && q.evidence.unit === c.chunk;
      var unit = unitBox(c, "chunk", i + 1, ids, similarity, isEvidence);
      section.appendChild(unit);
    });
    return section;
  }

  // --- the build ---

  function table(caption, header, body, className) {
    var t = el("table", className || null);
    t.appendChild(el("caption", null, caption));
    var head = el("tr");
    header.forEach(function (h) {
      var th = el("th", null, h);
      th.scope = "col";
      head.appendChild(th);
    });
    t.appendChild(el("thead")).appendChild(head);
    var tbody = t.appendChild(el("tbody"));
    body.forEach(function (row) {
      var tr = el("tr");
      row.forEach(function (v, i) {
        var cell = el(i === 0 ? "th" : "td", typeof v === "number" ? "num" : null);
        if (i === 0) cell.scope = "row";
        cell.appendChild(shownValue(v));
        tr.appendChild(cell);
      });
      tbody.appendChild(tr);
    });
    var wrap = el("div", "table-wrap");
    wrap.appendChild(t);
    return wrap;
  }

  // A value in a table's cell: numbers as numbers, a list as its items, an object as a list of
  // "key: value" lines (never as JSON); a node as it is.
  function shownValue(v) {
    if (v instanceof Node) return v;
    if (v === null || v === undefined) return value("-");
    if (typeof v === "number") return value(number(v));
    if (Array.isArray(v)) {
      if (!v.length) return value("none");
      if (v.every(isScalar)) {
        return sentence(
          "span",
          "items",
          v.map(function (item, i) {
            return i ? [", ", value(scalar(item))] : [value(scalar(item))];
          }).reduce(function (all, part) {
            return all.concat(part);
          }, [])
        );
      }
    }
    if (typeof v === "object") {
      var keys = Object.keys(v);
      if (!keys.length) return value("none");
      var list = el("ul", "pairs");
      keys.forEach(function (key) {
        var item = list.appendChild(el("li"));
        item.appendChild(value(key));
        item.appendChild(document.createTextNode(": "));
        item.appendChild(shownValue(v[key]));
      });
      return list;
    }
    return value(scalar(v));
  }

  function isScalar(v) {
    return v === null || typeof v !== "object";
  }

  function scalar(v) {
    if (v === null || v === undefined) return "-";
    if (typeof v === "number") return number(v);
    return String(v);
  }

  // A share as a percentage (one decimal), and a 95% interval of shares.
  function percent(x) {
    return x === null || x === undefined ? "-" : (100 * x).toFixed(1) + "%";
  }

  function interval(ci) {
    if (!Array.isArray(ci) || ci.length !== 2) return "-";
    return (100 * ci[0]).toFixed(1) + "\u2013" + (100 * ci[1]).toFixed(1) + "%";
  }

  // Nested settings as [dotted.key, value] rows.
  function flattened(object, prefix) {
    var out = [];
    Object.keys(object || {}).forEach(function (key) {
      var v = object[key];
      var name = (prefix || "") + key;
      if (v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length) {
        out = out.concat(flattened(v, name + "."));
      } else {
        out.push([name, v]);
      }
    });
    return out;
  }

  // A column name as read: "answerable_token" as "answerable token".
  function spoken(key) {
    return String(key).replace(/_/g, " ");
  }

  function pick(object, keys) {
    return keys.map(function (k) {
      return object[k];
    });
  }

  // The judge audit of each pool that has one: the share of each label the second judge
  // disputes, the two judges' agreement, its cost and its judge.
  function drawJudgeAudit(view, audits) {
    var pools = Object.keys(audits).filter(function (pool) {
      return audits[pool].judge_audit;
    });
    view.appendChild(el("h2", null, "Judge audit (a second judge)"));
    var rows = [];
    pools.forEach(function (pool) {
      var j = audits[pool].judge_audit;
      Object.keys(j.by_label).forEach(function (label) {
        var b = j.by_label[label];
        rows.push([
          pool + " / " + label,
          b.labelled,
          b.audited,
          b.disputed,
          percent(b.rate),
          interval(b.ci95),
          b.failed === undefined ? null : b.failed,
        ]);
      });
    });
    view.appendChild(
      table(
        "What the second judge disputes, by pool and label",
        ["pool / label", "labelled", "audited", "disputed", "rate", "95% interval", "undetermined"],
        rows
      )
    );
    view.appendChild(
      table(
        "The two judges' agreement and the judge audit's cost",
        ["pool", "units", "observed", "kappa", "95% interval", "judge calls", "prompt tokens"],
        pools.map(function (pool) {
          var j = audits[pool].judge_audit;
          var a = j.agreement || {};
          var kappa = a.kappa === null || a.kappa === undefined ? "-" : a.kappa.toFixed(3);
          var ci = Array.isArray(a.ci95)
            ? a.ci95
                .map(function (x) {
                  return x === null ? "-" : x.toFixed(3);
                })
                .join("\u2013")
            : "-";
          return [pool, a.units, percent(a.observed), kappa, ci, j.judge_calls, j.prompt_tokens];
        })
      )
    );
    var judges = [];
    pools.forEach(function (pool) {
      flattened(audits[pool].judge_audit.judge).forEach(function (pair) {
        judges.push([pool + " / " + pair[0], pair[1]]);
      });
    });
    view.appendChild(table("The second judge", ["pool / setting", "value"], judges, "settings"));
  }

  function drawBuild() {
    var view = byId("build-view");
    if (view.dataset.drawn) return;
    view.dataset.drawn = "1";
    var m = state.meta;
    view.appendChild(el("h2", null, "Funnel"));
    var poolKeys = [
      "questions",
      "answerable_token",
      "discarded_token",
      "undetermined_token",
      "to_vector",
      "answerable_vector",
      "unanswerable_vector",
      "undetermined_vector",
    ];
    view.appendChild(
      table(
        "Questions of each pool by stage and label",
        ["pool"].concat(poolKeys.map(spoken)),
        Object.keys(m.funnel.pools).map(function (name) {
          return [name].concat(pick(m.funnel.pools[name], poolKeys));
        })
      )
    );
    var splitKeys = ["questions", "answerable_token", "answerable_vector", "unanswerable_vector"];
    view.appendChild(
      table(
        "Questions of each split by stage and label",
        ["split"].concat(splitKeys.map(spoken)),
        Object.keys(m.funnel.splits).map(function (name) {
          return [name].concat(pick(m.funnel.splits[name], splitKeys));
        })
      )
    );
    var audited = Object.keys(m.audit);
    if (audited.length) {
      view.appendChild(el("h2", null, "Label audit"));
      var rowsOut = [];
      audited.forEach(function (pool) {
        var a = m.audit[pool];
        Object.keys(a.by_label).forEach(function (label) {
          var b = a.by_label[label];
          rowsOut.push([
            pool + " / " + label,
            b.labelled,
            b.audited,
            b.found,
            percent(b.rate),
            interval(b.ci95),
            b.by_cause,
          ]);
        });
        rowsOut.push([
          pool + " / all",
          null,
          a.audited,
          null,
          percent(a.rate),
          interval(a.ci95),
          null,
        ]);
      });
      view.appendChild(
        table(
          "What the audit found, by pool and label",
          ["pool / label", "labelled", "audited", "found", "rate", "95% interval", "by cause"],
          rowsOut
        )
      );
      view.appendChild(
        table(
          "The audits' cost and state",
          [
            "pool",
            "judge calls",
            "prompt tokens",
            "build's judge calls",
            "build's prompt tokens",
            "applied",
            "fingerprint",
          ],
          audited.map(function (pool) {
            var a = m.audit[pool];
            var b = a.build || {};
            return [
              pool,
              a.judge_calls,
              a.prompt_tokens,
              b.judge_calls,
              b.prompt_tokens,
              String(Boolean(a.applied)),
              a.fingerprint,
            ];
          })
        )
      );
      var settingRows = [];
      audited.forEach(function (pool) {
        flattened(m.audit[pool].settings).forEach(function (pair) {
          settingRows.push([pool + " / " + pair[0], pair[1]]);
        });
      });
      view.appendChild(
        table("The audits' settings", ["pool / setting", "value"], settingRows, "settings")
      );
    }
    if (judgeAudited()) drawJudgeAudit(view, m.audit);
    if (m.compare) {
      view.appendChild(sentence("h2", null, ["Against ", value(m.compare.other)]));
      var labels = m.labels;
      view.appendChild(
        table(
          "Labels of this build (rows) against " + m.compare.other + " (columns)",
          ["this build"].concat(labels),
          labels.map(function (a) {
            return [a].concat(
              labels.map(function (b) {
                return (m.compare.matrix[a] || {})[b] || 0;
              })
            );
          })
        )
      );
      view.appendChild(
        table(
          "Flips by the stages that decided them",
          ["stages", "flips"],
          Object.keys(m.compare.flips_by_stage).map(function (k) {
            return [k, m.compare.flips_by_stage[k]];
          })
        )
      );
    }
    view.appendChild(el("h2", null, "Figures"));
    if (!m.figures.length) view.appendChild(el("p", "note", m.figures_note));
    m.figures.forEach(function (figure) {
      var img = el("img", "figure");
      img.src = figure.src;
      img.alt = figure.alt;
      view.appendChild(img);
    });
    view.appendChild(el("h2", null, "Settings (as the dataset card states them)"));
    view.appendChild(table("Construction settings", ["setting", "value"], m.parameters, "settings"));
    view.appendChild(el("h2", null, "This page"));
    var total = 0;
    Object.keys(m.bytes).forEach(function (k) {
      total += m.bytes[k];
    });
    var t = m.texts;
    view.appendChild(
      el(
        "p",
        null,
        (t.whole
          ? "This copy keeps window texts whole (at most " +
            t.per_question +
            " token-stage windows a question)"
          : "This copy keeps the evidence whole and other windows as excerpts of " +
            t.around +
            " characters around their matches") +
          (!t.index
            ? ", without the token index"
            : t.context
              ? ", with " +
                t.context +
                " characters of the document on each side where the index gave them"
              : ", without the document's text around them") +
          ": " +
          number(total) +
          " bytes of data, " +
          number(m.questions ? Math.round(total / m.questions) : 0) +
          " a question."
      )
    );
    view.appendChild(
      table(
        "Data files by kind",
        ["kind", "bytes"],
        Object.keys(m.bytes).map(function (k) {
          return [k, m.bytes[k]];
        })
      )
    );
    view.appendChild(
      table(
        "What writing this page counted",
        ["count", "value"],
        Object.keys(m.counts).map(function (k) {
          return [k, m.counts[k]];
        })
      )
    );
  }

  window.tipqa = {
    meta: meta,
    rows: rows,
    search: search,
    details: details,
    texts: texts,
  };
})();
