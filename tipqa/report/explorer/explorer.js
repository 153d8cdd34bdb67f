// The tipqa explorer: a build's questions, their labels and evidence, from files on disk.
// Data files call tipqa.meta / tipqa.rows / tipqa.details; every element is built with
// createElement and textContent, so text from the corpus is never parsed as HTML.
"use strict";

(function () {
  var ROW_HEIGHT = 28;
  var COLUMNS = [
    { key: 0, title: "id", width: "9rem" },
    { key: 1, title: "question", width: "minmax(12rem, 3fr)" },
    { key: 2, title: "answer", width: "minmax(6rem, 1fr)" },
    { key: 3, title: "pool", width: "5rem", code: "pools" },
    { key: 4, title: "label", width: "7.5rem", code: "labels" },
    { key: 5, title: "stage", width: "4.5rem", code: "stages" },
    { key: 6, title: "split", width: "6rem", code: "splits" },
    { key: 7, title: "total", width: "5rem", numeric: true },
    { key: 8, title: "judged", width: "5rem", numeric: true },
  ];
  var state = {
    meta: null,
    rows: [],
    lower: [],
    loadedFiles: 0,
    shown: new Int32Array(0),
    sortKey: null,
    sortDescending: false,
    details: {},
    waiting: {},
    byId: null,
    firstDrawn: false,
  };

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function loadScript(src) {
    var script = document.createElement("script");
    script.src = src;
    script.onerror = function () {
      setStatus("could not load " + src);
    };
    document.head.appendChild(script);
  }

  function pad(n) {
    return ("0000" + n).slice(-5);
  }

  function setStatus(text) {
    var status = document.getElementById("status");
    if (status) status.textContent = text;
  }

  function code(name, index) {
    if (index === -1 || index === null || index === undefined) return "none";
    return state.meta[name][index];
  }

  function number(value) {
    return value === null || value === undefined ? "-" : Number(value).toLocaleString("en");
  }

  function probability(value) {
    return value === null || value === undefined ? "-" : Number(value).toFixed(3);
  }

  // --- data loading ---

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
    state.loadedFiles += 1;
    state.byId = null;
    applyFilters();
    if (state.loadedFiles < state.meta.row_files) {
      loadScript("data/rows-" + pad(state.loadedFiles) + ".js");
      setStatus("loaded " + number(state.rows.length) + " of " + number(state.meta.questions));
    } else {
      setStatus(number(state.rows.length) + " questions");
      window.tipqaAllRows = performance.now();
      route();
    }
  }

  function details(index, questions) {
    state.details[index] = questions;
    var callbacks = state.waiting[index] || [];
    delete state.waiting[index];
    callbacks.forEach(function (callback) {
      callback(questions);
    });
  }

  function withDetails(rowIndex, callback) {
    var file = Math.floor(rowIndex / state.meta.details_per_file);
    if (state.details[file]) return callback(state.details[file]);
    if (!state.waiting[file]) {
      state.waiting[file] = [];
      loadScript("data/details-" + pad(file) + ".js");
    }
    state.waiting[file].push(callback);
  }

  // --- the table ---

  function fillSelect(id, names) {
    var select = document.getElementById(id);
    select.appendChild(el("option", null, "all")).value = "";
    names.forEach(function (name, i) {
      select.appendChild(el("option", null, name)).value = String(i);
    });
    select.addEventListener("change", applyFilters);
  }

  function start() {
    var m = state.meta;
    document.getElementById("title").textContent = "tipqa explorer: " + m.build;
    document.title = "tipqa explorer: " + m.build;
    fillSelect("f-pool", m.pools);
    fillSelect("f-label", m.labels);
    fillSelect("f-stage", m.stages);
    fillSelect("f-split", m.splits.concat(["none"]));
    var search = document.getElementById("f-search");
    var timer = null;
    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(applyFilters, 150);
    });
    document.getElementById("filters").addEventListener("submit", function (event) {
      event.preventDefault();
    });
    var head = document.getElementById("grid-head");
    var template = COLUMNS.map(function (c) {
      return c.width;
    }).join(" ");
    head.style.gridTemplateColumns = template;
    state.template = template;
    COLUMNS.forEach(function (column) {
      var cell = el("button", "sort", column.title);
      cell.type = "button";
      cell.dataset.key = String(column.key);
      cell.addEventListener("click", function () {
        sortBy(column.key);
      });
      head.appendChild(cell);
    });
    var grid = document.getElementById("grid");
    grid.addEventListener("scroll", function () {
      if (!state.frame) state.frame = requestAnimationFrame(draw);
    });
    window.addEventListener("resize", draw);
    window.addEventListener("hashchange", route);
    if (m.questions === 0) {
      setStatus("no questions in this build");
      window.tipqaFirstRows = performance.now();
      route();
    } else {
      loadScript("data/rows-00000.js");
      setStatus("loading questions");
    }
    route();
  }

  function selected(id) {
    var value = document.getElementById(id).value;
    return value === "" ? null : Number(value);
  }

  function applyFilters() {
    var pool = selected("f-pool");
    var label = selected("f-label");
    var stage = selected("f-stage");
    var split = selected("f-split");
    if (split !== null && split === state.meta.splits.length) split = -1;
    var needle = document.getElementById("f-search").value.trim().toLowerCase();
    var out = new Int32Array(state.rows.length);
    var n = 0;
    for (var i = 0; i < state.rows.length; i++) {
      var row = state.rows[i];
      if (pool !== null && row[3] !== pool) continue;
      if (label !== null && row[4] !== label) continue;
      if (stage !== null && row[5] !== stage) continue;
      if (split !== null && row[6] !== split) continue;
      if (needle && state.lower[i].indexOf(needle) === -1) continue;
      out[n++] = i;
    }
    state.shown = out.subarray(0, n);
    if (state.sortKey !== null) sortShown();
    document.getElementById("shown").textContent =
      number(n) + " of " + number(state.rows.length) + " shown";
    document.getElementById("grid-space").style.height = n * ROW_HEIGHT + "px";
    draw();
  }

  function sortValue(row, key) {
    var column = COLUMNS[key];
    if (column.code) return code(column.code, row[key]);
    return row[key];
  }

  function sortShown() {
    var key = state.sortKey;
    var sign = state.sortDescending ? -1 : 1;
    var numeric = COLUMNS[key].numeric;
    var shown = Array.prototype.slice.call(state.shown);
    shown.sort(function (a, b) {
      var x = sortValue(state.rows[a], key);
      var y = sortValue(state.rows[b], key);
      if (x === y) return a - b;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      if (numeric) return sign * (x - y);
      return sign * String(x).localeCompare(String(y));
    });
    state.shown = Int32Array.from(shown);
  }

  function sortBy(key) {
    if (state.sortKey === key) {
      state.sortDescending = !state.sortDescending;
    } else {
      state.sortKey = key;
      state.sortDescending = false;
    }
    document.querySelectorAll("#grid-head .sort").forEach(function (button) {
      var on = Number(button.dataset.key) === key;
      button.classList.toggle("sorted", on);
      button.classList.toggle("descending", on && state.sortDescending);
    });
    applyFilters();
  }

  function draw() {
    state.frame = null;
    var grid = document.getElementById("grid");
    var space = document.getElementById("grid-space");
    var first = Math.max(0, Math.floor(grid.scrollTop / ROW_HEIGHT) - 5);
    var last = Math.min(
      state.shown.length,
      Math.ceil((grid.scrollTop + grid.clientHeight) / ROW_HEIGHT) + 5
    );
    clear(space);
    for (var position = first; position < last; position++) {
      space.appendChild(drawRow(state.shown[position], position));
    }
    if (!state.firstDrawn && last > first) {
      state.firstDrawn = true;
      window.tipqaFirstRows = performance.now();
    }
  }

  function drawRow(index, position) {
    var row = state.rows[index];
    var line = el("a", "grid-row label-" + code("labels", row[4]));
    line.href = "#q=" + encodeURIComponent(row[0]);
    line.style.top = position * ROW_HEIGHT + "px";
    line.style.gridTemplateColumns = state.template;
    COLUMNS.forEach(function (column) {
      var value = row[column.key];
      if (column.code) value = code(column.code, value);
      else if (column.numeric) value = number(value);
      var cell = el("span", column.numeric ? "num" : null, value);
      cell.title = String(value);
      line.appendChild(cell);
    });
    return line;
  }

  // --- routing ---

  function show(view) {
    ["table-view", "question-view", "build-view"].forEach(function (id) {
      document.getElementById(id).hidden = id !== view;
    });
  }

  function route() {
    var hash = location.hash.slice(1);
    if (hash.indexOf("q=") === 0) {
      show("question-view");
      openQuestion(decodeURIComponent(hash.slice(2)));
    } else if (hash === "build") {
      show("build-view");
      drawBuild();
    } else {
      show("table-view");
      draw();
    }
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

  function escapeRegExp(text) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }

  function phrasePattern(phrases) {
    var seen = {};
    var parts = [];
    (phrases || []).forEach(function (phrase) {
      var words = String(phrase).split(/\s+/).filter(Boolean);
      if (!words.length) return;
      var key = words.join(" ").toLowerCase();
      if (seen[key]) return;
      seen[key] = true;
      parts.push(words.map(escapeRegExp).join("\\s+"));
    });
    parts.sort(function (a, b) {
      return b.length - a.length;
    });
    return parts.length ? parts.join("|") : null;
  }

  function highlighter(aliases, keywords) {
    var alias = phrasePattern(aliases);
    var keyword = phrasePattern(keywords);
    var groups = [];
    if (alias) groups.push("(" + alias + ")");
    else groups.push("(?!)");
    if (keyword) groups.push("(" + keyword + ")");
    else groups.push("(?!)");
    if (!alias && !keyword) return null;
    return new RegExp(
      "(?<![\\p{L}\\p{N}])(?:" + groups.join("|") + ")(?![\\p{L}\\p{N}])",
      "giu"
    );
  }

  // The text as text nodes, with the aliases and keywords in <mark> elements.
  function highlighted(text, pattern) {
    var block = el("div", "text");
    if (!pattern) {
      block.textContent = text;
      return block;
    }
    pattern.lastIndex = 0;
    var last = 0;
    var match;
    while ((match = pattern.exec(text)) !== null) {
      if (match[0] === "") {
        pattern.lastIndex += 1;
        continue;
      }
      block.appendChild(document.createTextNode(text.slice(last, match.index)));
      block.appendChild(el("mark", match[1] !== undefined ? "alias" : "keyword", match[0]));
      last = match.index + match[0].length;
    }
    block.appendChild(document.createTextNode(text.slice(last)));
    return block;
  }

  function facts(pairs) {
    var list = el("dl", "facts");
    pairs.forEach(function (pair) {
      list.appendChild(el("dt", null, pair[0]));
      var value = el("dd");
      if (pair[1] instanceof Node) value.appendChild(pair[1]);
      else value.textContent = pair[1] === null || pair[1] === undefined ? "-" : String(pair[1]);
      list.appendChild(value);
    });
    return list;
  }

  function chips(values, className) {
    var span = el("span", "chips");
    (values || []).forEach(function (value) {
      span.appendChild(el("span", "chip " + className, value));
    });
    if (!values || !values.length) span.textContent = "none";
    return span;
  }

  function verdict(value) {
    return el("span", "verdict verdict-" + (value || "none"), value || "not judged");
  }

  function offsets(start, end) {
    return start === null || start === undefined ? "offsets unknown" : start + "\u2013" + end;
  }

  function openQuestion(id) {
    var view = document.getElementById("question-view");
    clear(view);
    var index = rowIndexOf(id);
    if (index === undefined) {
      var done = state.meta && state.loadedFiles >= state.meta.row_files;
      view.appendChild(el("p", "note", done ? "No question " + id + " in this build." : "Loading\u2026"));
      return;
    }
    view.appendChild(el("p", "note", "Loading question\u2026"));
    withDetails(index, function (questions) {
      if (location.hash.slice(3) && decodeURIComponent(location.hash.slice(3)) !== id) return;
      drawQuestion(view, questions[id]);
    });
  }

  function drawQuestion(view, q) {
    clear(view);
    var back = el("a", "back", "\u2190 all questions");
    back.href = "#";
    view.appendChild(back);
    view.appendChild(el("h2", "question-text", q.question));
    var label = el("span", "badge label-" + q.label, q.label);
    view.appendChild(
      facts([
        ["id", q.id],
        ["answer", q.answer],
        ["aliases", chips(q.aliases, "alias")],
        ["keywords", chips(q.keywords, "keyword")],
        ["label", label],
        ["decided by", q.stage + " stage"],
        ["pool / split", q.pool + " / " + (q.split || "none")],
        ["documents matched", number(q.total)],
      ])
    );
    var whyBox = el("div", "why");
    whyBox.appendChild(el("h3", null, "Why " + q.label));
    whyBox.appendChild(el("p", "why-text", q.why));
    whyBox.appendChild(el("p", "reason", "Recorded reason: " + q.reason));
    if (q.evidence) {
      whyBox.appendChild(
        facts([
          ["evidence document", q.evidence.doc],
          ["evidence unit", q.evidence.unit + " (" + q.evidence.stage + " stage)"],
          ["offsets", offsets(q.evidence.start, q.evidence.end)],
          ["qrels line", q.id + " 0 " + q.evidence.doc + " 1"],
        ])
      );
    }
    view.appendChild(whyBox);
    var pattern = highlighter(q.aliases, q.keywords);
    view.appendChild(tokenSection(q, pattern));
    view.appendChild(vectorSection(q, pattern));
  }

  function tokenSection(q, pattern) {
    var section = el("section", "stage token-stage");
    var windows = 0;
    q.token.forEach(function (d) {
      windows += d.windows.length;
    });
    section.appendChild(
      el(
        "h3",
        null,
        "Token stage: " + q.token.length + " documents, " + windows + " windows judged, in judged order"
      )
    );
    if (!q.token.length) section.appendChild(el("p", "note", "No document was judged."));
    var order = 0;
    q.token.forEach(function (d) {
      var box = el("div", "document qrel-" + d.qrel);
      var head = el("div", "document-head");
      head.appendChild(el("span", "doc-id", d.doc));
      head.appendChild(
        el(
          "span",
          "doc-rank",
          "search rank " + number(d.rank) + ", score " + number(d.score) + ", qrels relevance " + d.qrel
        )
      );
      box.appendChild(head);
      d.windows.forEach(function (w) {
        order += 1;
        var unit = el("div", "unit window verdict-box-" + w.verdict);
        var line = el("div", "unit-head");
        line.appendChild(el("span", "order", "#" + order));
        line.appendChild(el("span", "unit-id", w.unit));
        line.appendChild(verdict(w.verdict));
        line.appendChild(el("span", "p-yes", "P(yes) " + probability(w.p_yes)));
        line.appendChild(el("span", "offsets", offsets(w.start, w.end)));
        unit.appendChild(line);
        if (w.error) unit.appendChild(el("p", "error", "error: " + w.error));
        if (w.text !== null && w.text !== undefined) unit.appendChild(highlighted(w.text, pattern));
        else unit.appendChild(el("p", "note", textNote()));
        box.appendChild(unit);
      });
      section.appendChild(box);
    });
    return section;
  }

  function textNote() {
    var texts = state.meta.texts;
    if (!texts.index) return "Window text not included (written without the token index).";
    return "Window text not included (at most " + texts.per_question + " per question).";
  }

  function vectorSection(q, pattern) {
    var section = el("section", "stage vector-stage");
    section.appendChild(el("h3", null, "Vector stage: " + q.vector.length + " chunks by similarity"));
    if (!q.vector.length) {
      section.appendChild(el("p", "note", "The question did not reach the vector stage."));
    }
    q.vector.forEach(function (c, i) {
      var unit = el("div", "unit chunk verdict-box-" + (c.verdict || "none"));
      var line = el("div", "unit-head");
      line.appendChild(el("span", "order", "#" + (i + 1)));
      line.appendChild(el("span", "unit-id", c.chunk));
      line.appendChild(el("span", "doc-id", c.doc));
      line.appendChild(el("span", "similarity", "similarity " + Number(c.score).toFixed(4)));
      line.appendChild(verdict(c.verdict));
      line.appendChild(el("span", "p-yes", "P(yes) " + probability(c.p_yes)));
      line.appendChild(el("span", "offsets", offsets(c.start, c.end)));
      unit.appendChild(line);
      if (c.text !== null && c.text !== undefined) unit.appendChild(highlighted(c.text, pattern));
      section.appendChild(unit);
    });
    return section;
  }

  // --- the build ---

  function table(header, body) {
    var t = el("table");
    var head = el("tr");
    header.forEach(function (h) {
      head.appendChild(el("th", null, h));
    });
    t.appendChild(el("thead")).appendChild(head);
    var tbody = t.appendChild(el("tbody"));
    body.forEach(function (row) {
      var tr = el("tr");
      row.forEach(function (value) {
        var text = typeof value === "number" ? number(value) : value;
        if (value !== null && typeof value === "object") text = JSON.stringify(value);
        tr.appendChild(el("td", typeof value === "number" ? "num" : null, text));
      });
      tbody.appendChild(tr);
    });
    return t;
  }

  function drawBuild() {
    var view = document.getElementById("build-view");
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
        ["pool"].concat(poolKeys),
        Object.keys(m.funnel.pools).map(function (name) {
          return [name].concat(
            poolKeys.map(function (k) {
              return m.funnel.pools[name][k];
            })
          );
        })
      )
    );
    var splitKeys = ["questions", "answerable_token", "answerable_vector", "unanswerable_vector"];
    view.appendChild(
      table(
        ["split"].concat(splitKeys),
        Object.keys(m.funnel.splits).map(function (name) {
          return [name].concat(
            splitKeys.map(function (k) {
              return m.funnel.splits[name][k];
            })
          );
        })
      )
    );
    view.appendChild(el("h2", null, "Figures"));
    if (!m.figures.length) view.appendChild(el("p", "note", "No figures (the report was not built)."));
    m.figures.forEach(function (src) {
      var img = el("img", "figure");
      img.src = src;
      img.alt = src;
      view.appendChild(img);
    });
    view.appendChild(el("h2", null, "Settings (as the dataset card states them)"));
    view.appendChild(table(["setting", "value"], m.parameters));
    view.appendChild(el("h2", null, "This page"));
    view.appendChild(
      table(
        ["count", "value"],
        Object.keys(m.counts).map(function (k) {
          return [k, m.counts[k]];
        })
      )
    );
  }

  window.tipqa = { meta: meta, rows: rows, details: details };
})();
