/* C versions of two hot loops of the token index (see speedups.py): the analysis of
   lower-cased ASCII text for the build, and the counting of ASCII phrases in UTF-8 text for
   queries.

   Tokens are maximal runs of ASCII letters and digits; runs longer than MAX_TOKEN bytes are
   dropped, as tipqa.text.tokenize drops them. Both functions give exactly what the Python code
   gives (tests/tipqa/token_index/test_speedups.py compares them on random text). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_TOKEN 40
#define LOW_RANGE 64

typedef struct {
    Py_ssize_t start;
    Py_ssize_t len;
} Span;

typedef struct {
    Py_ssize_t span; /* index of the token's first occurrence, -1 for an empty slot */
    Py_ssize_t count;
} Slot;

static unsigned char IS_TOKEN[256];

/* A token character for `tipqa.text` (`[^\W_]`: alphanumeric for Python), ASCII by table. */
static inline int is_alnum(Py_UCS4 c) { return c < 128 ? IS_TOKEN[c] : Py_UNICODE_ISALNUM(c); }

/* The kept tokens of `text` into `spans` (room for (n + 1) / 2); *dropped is set when a run
   was too long. Returns the number of tokens. */
static Py_ssize_t split(const unsigned char *text, Py_ssize_t n, Span *spans, int *dropped) {
    Py_ssize_t i = 0, count = 0;
    *dropped = 0;
    while (i < n) {
        while (i < n && !IS_TOKEN[text[i]]) i++;
        Py_ssize_t start = i;
        while (i < n && IS_TOKEN[text[i]]) i++;
        Py_ssize_t len = i - start;
        if (len > MAX_TOKEN) {
            *dropped = 1;
        } else if (len > 0) {
            spans[count].start = start;
            spans[count].len = len;
            count++;
        }
    }
    return count;
}

static uint64_t hash_bytes(const unsigned char *p, Py_ssize_t len) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (Py_ssize_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* The distinct tokens of a text (`spans` into `base`, `kind` bytes a character), counted in an
   open-addressing table: `order` holds their slots in first-seen order. */
typedef struct {
    Slot *slots;
    Py_ssize_t *order;
    Py_ssize_t distinct;
} Counts;

static void free_counts(Counts *counts) {
    PyMem_Free(counts->slots);
    PyMem_Free(counts->order);
}

/* Fill `counts`; 0, or -1 with MemoryError set. */
static int count_tokens(const char *base, int kind, const Span *spans, Py_ssize_t tokens,
                        Counts *counts) {
    Py_ssize_t size = 16;
    while (size < 2 * tokens) size <<= 1;
    counts->slots = PyMem_Malloc(sizeof(Slot) * (size_t)size);
    counts->order = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(tokens + 1));
    counts->distinct = 0;
    if (counts->slots == NULL || counts->order == NULL) {
        free_counts(counts);
        PyErr_NoMemory();
        return -1;
    }
    Slot *slots = counts->slots;
    for (Py_ssize_t s = 0; s < size; s++) slots[s].span = -1;
    for (Py_ssize_t t = 0; t < tokens; t++) {
        const char *token = base + spans[t].start * kind;
        Py_ssize_t width = spans[t].len * kind;
        Py_ssize_t s = (Py_ssize_t)(hash_bytes((const unsigned char *)token, width) &
                                    (uint64_t)(size - 1));
        while (slots[s].span >= 0 &&
               !(spans[slots[s].span].len == spans[t].len &&
                 memcmp(base + spans[slots[s].span].start * kind, token, (size_t)width) == 0))
            s = (s + 1) & (size - 1);
        if (slots[s].span < 0) {
            slots[s].span = t;
            slots[s].count = 0;
            counts->order[counts->distinct++] = s;
        }
        slots[s].count++;
    }
    return 0;
}

/* Append one `repeats` term: the token, a separator and a number; a space before all but the
   first. Returns the new length. */
static Py_ssize_t put_term(char *out, Py_ssize_t at, const unsigned char *token, Py_ssize_t len,
                           char separator, Py_ssize_t number) {
    if (at > 0) out[at++] = ' ';
    memcpy(out + at, token, (size_t)len);
    at += len;
    at += sprintf(out + at, "%c%zd", separator, number);
    return at;
}

static PyObject *analyse_ascii(PyObject *module, PyObject *arg) {
    (void)module;
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "analyse_ascii takes bytes");
        return NULL;
    }
    const unsigned char *text = (const unsigned char *)PyBytes_AS_STRING(arg);
    Py_ssize_t n = PyBytes_GET_SIZE(arg);
    Span *spans = PyMem_Malloc(sizeof(Span) * (size_t)((n + 1) / 2 + 1));
    if (spans == NULL) return PyErr_NoMemory();
    int dropped;
    Py_ssize_t tokens = split(text, n, spans, &dropped);

    Counts counts;
    if (count_tokens((const char *)text, 1, spans, tokens, &counts) < 0) {
        PyMem_Free(spans);
        return NULL;
    }
    Slot *slots = counts.slots;
    Py_ssize_t *order = counts.order, distinct = counts.distinct, repeated_bytes = 0;

    /* each term: a space, the token, a separator and at most 20 digits */
    for (Py_ssize_t d = 0; d < distinct; d++) {
        Slot *slot = &slots[order[d]];
        if (slot->count < 2) continue;
        Py_ssize_t extra = slot->count - 1, terms = extra % LOW_RANGE != 0;
        for (Py_ssize_t high = extra / LOW_RANGE; high; high >>= 1) terms += high & 1;
        repeated_bytes += (spans[slot->span].len + 22) * terms;
    }
    PyObject *result = NULL, *prepared = NULL, *repeats = NULL;
    char *out = PyMem_Malloc((size_t)repeated_bytes + 1);
    if (out == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t at = 0;
    for (Py_ssize_t d = 0; d < distinct; d++) {
        Slot *slot = &slots[order[d]];
        if (slot->count < 2) continue;
        const unsigned char *token = text + spans[slot->span].start;
        Py_ssize_t len = spans[slot->span].len, extra = slot->count - 1;
        Py_ssize_t high = extra / LOW_RANGE, low = extra % LOW_RANGE;
        if (low) at = put_term(out, at, token, len, ':', low);
        for (Py_ssize_t bit = 0; high; bit++, high >>= 1)
            if (high & 1) at = put_term(out, at, token, len, '^', bit);
    }
    repeats = PyUnicode_DecodeASCII(out, at, NULL);
    if (repeats == NULL) goto done;
    if (dropped) {
        char *joined = PyMem_Malloc((size_t)n + 1);
        if (joined == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        Py_ssize_t j = 0;
        for (Py_ssize_t t = 0; t < tokens; t++) {
            if (t > 0) joined[j++] = ' ';
            memcpy(joined + j, text + spans[t].start, (size_t)spans[t].len);
            j += spans[t].len;
        }
        prepared = PyUnicode_DecodeASCII(joined, j, NULL);
        PyMem_Free(joined);
        if (prepared == NULL) goto done;
    } else {
        prepared = Py_NewRef(Py_None);
    }
    result = PyTuple_Pack(2, prepared, repeats);
done:
    Py_XDECREF(prepared);
    Py_XDECREF(repeats);
    PyMem_Free(out);
    free_counts(&counts);
    PyMem_Free(spans);
    return result;
}

/* Append "<token><separator><number>" to the list `terms`; nonzero on failure. */
static int append_term(PyObject *terms, PyObject *token, char separator, Py_ssize_t number) {
    PyObject *term = PyUnicode_FromFormat("%U%c%zd", token, separator, number);
    if (term == NULL) return 1;
    int failed = PyList_Append(terms, term);
    Py_DECREF(term);
    return failed != 0;
}

/* The `repeats` field of prepared text (any Unicode): tokens are the runs of characters that
   are alphanumeric for Python, which is what `[^\W_]` matches in `str` (the prepared text has
   no run longer than the token limit). */
static PyObject *repeats(PyObject *module, PyObject *arg) {
    (void)module;
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "repeats takes str");
        return NULL;
    }
    int kind = PyUnicode_KIND(arg);
    const void *data = PyUnicode_DATA(arg);
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg), tokens = 0, i = 0;
    Span *spans = PyMem_Malloc(sizeof(Span) * (size_t)((n + 1) / 2 + 1));
    if (spans == NULL) return PyErr_NoMemory();
    while (i < n) {
        while (i < n && !is_alnum(PyUnicode_READ(kind, data, i))) i++;
        Py_ssize_t start = i;
        while (i < n && is_alnum(PyUnicode_READ(kind, data, i))) i++;
        if (i > start) {
            spans[tokens].start = start;
            spans[tokens].len = i - start;
            tokens++;
        }
    }
    Counts counts;
    if (count_tokens(data, kind, spans, tokens, &counts) < 0) {
        PyMem_Free(spans);
        return NULL;
    }
    PyObject *terms = PyList_New(0), *result = NULL;
    if (terms == NULL) goto done;
    for (Py_ssize_t d = 0; d < counts.distinct; d++) {
        Slot *slot = &counts.slots[counts.order[d]];
        if (slot->count < 2) continue;
        Span *span = &spans[slot->span];
        PyObject *token = PyUnicode_Substring(arg, span->start, span->start + span->len);
        if (token == NULL) goto done;
        Py_ssize_t extra = slot->count - 1, high = extra / LOW_RANGE, low = extra % LOW_RANGE;
        int failed = 0;
        if (low) failed |= append_term(terms, token, ':', low);
        for (Py_ssize_t bit = 0; high && !failed; bit++, high >>= 1)
            if (high & 1) failed |= append_term(terms, token, '^', bit);
        Py_DECREF(token);
        if (failed) goto done;
    }
    PyObject *space = PyUnicode_FromString(" ");
    if (space != NULL) {
        result = PyUnicode_Join(space, terms);
        Py_DECREF(space);
    }
done:
    Py_XDECREF(terms);
    free_counts(&counts);
    PyMem_Free(spans);
    return result;
}

/* The character at `i`, a space when `blank` (a bitmap of code points) has it. */
static Py_UCS4 blanked(int kind, const void *data, Py_ssize_t i, const unsigned char *blank,
                       Py_ssize_t bits) {
    Py_UCS4 c = PyUnicode_READ(kind, data, i);
    return (Py_ssize_t)c < bits && (blank[c >> 3] >> (c & 7)) & 1 ? ' ' : c;
}

/* `tantivy_analysis.prepare` after lower-casing: the characters of `blank` made spaces and,
   where a whitespace-separated chunk is longer than the token limit, the chunks joined by
   single spaces with the token runs too long to be tokens removed from the long ones. */
static PyObject *prepare(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *lowered;
    const unsigned char *blank;
    Py_ssize_t blank_bytes;
    if (!PyArg_ParseTuple(args, "Uy#", &lowered, &blank, &blank_bytes)) return NULL;
    int kind = PyUnicode_KIND(lowered);
    const void *data = PyUnicode_DATA(lowered);
    Py_ssize_t n = PyUnicode_GET_LENGTH(lowered), bits = blank_bytes * 8, longest = 0, run = 0;
    int spaced = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = blanked(kind, data, i, blank, bits);
        spaced |= c != PyUnicode_READ(kind, data, i);
        run = Py_UNICODE_ISSPACE(c) ? 0 : run + 1;
        if (run > longest) longest = run;
    }
    if (!spaced && longest <= MAX_TOKEN) return Py_NewRef(lowered);
    Py_UCS4 *out = PyMem_Malloc(sizeof(Py_UCS4) * (size_t)(n + 1));
    if (out == NULL) return PyErr_NoMemory();
    Py_ssize_t at = 0;
    if (longest <= MAX_TOKEN) {
        for (Py_ssize_t i = 0; i < n; i++) out[at++] = blanked(kind, data, i, blank, bits);
    } else {
        Py_ssize_t i = 0, chunks = 0;
        while (i < n) {
            while (i < n && Py_UNICODE_ISSPACE(blanked(kind, data, i, blank, bits))) i++;
            if (i >= n) break;
            Py_ssize_t start = i;
            while (i < n && !Py_UNICODE_ISSPACE(blanked(kind, data, i, blank, bits))) i++;
            if (chunks++) out[at++] = ' ';
            for (Py_ssize_t j = start; j < i;) {
                Py_UCS4 c = blanked(kind, data, j, blank, bits);
                if (i - start <= MAX_TOKEN || !is_alnum(c)) {
                    out[at++] = c;
                    j++;
                    continue;
                }
                Py_ssize_t token = j;
                while (j < i && is_alnum(blanked(kind, data, j, blank, bits))) j++;
                if (j - token <= MAX_TOKEN)
                    for (Py_ssize_t k = token; k < j; k++) out[at++] = blanked(kind, data, k, blank, bits);
            }
        }
    }
    PyObject *result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, at);
    PyMem_Free(out);
    return result;
}

/* The first occurrence of `needle` in `text`, or NULL. */
static const unsigned char *find(const unsigned char *text, Py_ssize_t n,
                                 const unsigned char *needle, Py_ssize_t len) {
#if defined(__GLIBC__) || defined(__APPLE__)
    return memmem(text, (size_t)n, needle, (size_t)len);
#else
    const unsigned char *stop = text + n - len;
    for (const unsigned char *at = text; at <= stop; at++) {
        at = memchr(at, needle[0], (size_t)(stop - at + 1));
        if (at == NULL) return NULL;
        if (memcmp(at, needle, (size_t)len) == 0) return at;
    }
    return NULL;
#endif
}

/* Byte classes of UTF-8 text for `count`: a byte of a non-ASCII character may or may not be
   part of a token (that takes Python's Unicode tables and lower-casing), so a hit next to one
   is left undecided. */
#define SEPARATOR 0
#define TOKEN 1
#define UNKNOWN 2
#define UNDECIDED (-1)

static unsigned char CLASS[256];

/* The first token at or after `i` (separators and runs too long to be tokens skipped): 1, 0
   when there is none, UNDECIDED at a non-ASCII byte. */
static int next_token(const unsigned char *text, Py_ssize_t n, Py_ssize_t i, Span *token) {
    for (;;) {
        while (i < n && CLASS[text[i]] == SEPARATOR) i++;
        if (i >= n) return 0;
        Py_ssize_t start = i;
        while (i < n && CLASS[text[i]] == TOKEN) i++;
        if (i == start || (i < n && CLASS[text[i]] == UNKNOWN)) return UNDECIDED;
        if (i - start <= MAX_TOKEN) {
            token->start = start;
            token->len = i - start;
            return 1;
        }
    }
}

/* The last token that ends at or before `i` (as `next_token`). */
static int previous_token(const unsigned char *text, Py_ssize_t i, Span *token) {
    for (;;) {
        while (i > 0 && CLASS[text[i - 1]] == SEPARATOR) i--;
        if (i <= 0) return 0;
        Py_ssize_t end = i;
        while (i > 0 && CLASS[text[i - 1]] == TOKEN) i--;
        if (i == end || (i > 0 && CLASS[text[i - 1]] == UNKNOWN)) return UNDECIDED;
        if (end - i <= MAX_TOKEN) {
            token->start = i;
            token->len = end - i;
            return 1;
        }
    }
}

/* 1 when the tokens of `phrase` from `first` to `last` (by `step`) follow (or, step -1,
   precede) position `at`; 0 when not, UNDECIDED at a non-ASCII byte. */
static int tokens_around(const unsigned char *text, Py_ssize_t n, Py_ssize_t at, PyObject *phrase,
                         Py_ssize_t first, Py_ssize_t last, Py_ssize_t step) {
    Span token = {at, 0};
    for (Py_ssize_t j = first; j != last; j += step) {
        int found = step > 0 ? next_token(text, n, token.start + token.len, &token)
                             : previous_token(text, token.start, &token);
        if (found != 1) return found;
        PyObject *expected = PyTuple_GET_ITEM(phrase, j);
        if (token.len != PyBytes_GET_SIZE(expected) ||
            memcmp(text + token.start, PyBytes_AS_STRING(expected), (size_t)token.len) != 0)
            return 0;
    }
    return 1;
}

/* Occurrences of one phrase (a tuple of bytes tokens) among the tokens of `text`, or
   UNDECIDED: its longest token found by `find`, then the tokens around it checked. */
static Py_ssize_t count_one(const unsigned char *text, Py_ssize_t n, PyObject *phrase) {
    Py_ssize_t m = PyTuple_GET_SIZE(phrase), anchor = 0, count = 0;
    if (m == 0) return 0;
    for (Py_ssize_t j = 0; j < m; j++) {
        Py_ssize_t len = PyBytes_GET_SIZE(PyTuple_GET_ITEM(phrase, j));
        if (len == 0 || len > MAX_TOKEN) return 0;
        if (len > PyBytes_GET_SIZE(PyTuple_GET_ITEM(phrase, anchor))) anchor = j;
    }
    PyObject *needle = PyTuple_GET_ITEM(phrase, anchor);
    Py_ssize_t len = PyBytes_GET_SIZE(needle), at = 0;
    const unsigned char *hit;
    /* a token starts after a separator: none starts inside the anchor's letters */
    while (at <= n - len &&
           (hit = find(text + at, n - at,
                       (const unsigned char *)PyBytes_AS_STRING(needle), len)) != NULL) {
        Py_ssize_t start = hit - text, end = start + len;
        at = end;
        int before = start > 0 ? CLASS[text[start - 1]] : SEPARATOR;
        int after = end < n ? CLASS[text[end]] : SEPARATOR;
        if (before == UNKNOWN || after == UNKNOWN) return UNDECIDED;
        if (before == TOKEN || after == TOKEN) continue;
        int following = tokens_around(text, n, end, phrase, anchor + 1, m, 1);
        if (following != 1) {
            if (following == UNDECIDED) return UNDECIDED;
            continue;
        }
        int preceding = tokens_around(text, n, start, phrase, anchor - 1, -1, -1);
        if (preceding == UNDECIDED) return UNDECIDED;
        count += preceding;
    }
    return count;
}

static PyObject *count(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *phrases;
    const char *raw;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "y#O!", &raw, &n, &PyTuple_Type, &phrases)) return NULL;
    Py_ssize_t p = PyTuple_GET_SIZE(phrases);
    for (Py_ssize_t i = 0; i < p; i++) {
        PyObject *phrase = PyTuple_GET_ITEM(phrases, i);
        int valid = PyTuple_Check(phrase);
        for (Py_ssize_t j = 0; valid && j < PyTuple_GET_SIZE(phrase); j++)
            valid = PyBytes_Check(PyTuple_GET_ITEM(phrase, j));
        if (!valid) {
            PyErr_SetString(PyExc_TypeError, "count takes a tuple of tuples of bytes");
            return NULL;
        }
    }
    /* İ and the Kelvin sign lower-case to ASCII letters: tokens that the bytes do not show */
    static const char *const TO_ASCII[] = {"\xc4\xb0", "\xe2\x84\xaa"};
    for (size_t i = 0; i < sizeof(TO_ASCII) / sizeof(TO_ASCII[0]); i++)
        if (find((const unsigned char *)raw, n, (const unsigned char *)TO_ASCII[i],
                 (Py_ssize_t)strlen(TO_ASCII[i])) != NULL)
            Py_RETURN_NONE;
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < p; i++) {
        Py_ssize_t found = count_one((const unsigned char *)raw, n, PyTuple_GET_ITEM(phrases, i));
        if (found == UNDECIDED) Py_RETURN_NONE;
        total += found;
    }
    return PyLong_FromSsize_t(total);
}

static PyMethodDef METHODS[] = {
    {"analyse_ascii", analyse_ascii, METH_O,
     "(prepared text or None, repeats field) of lower-cased ASCII text."},
    {"repeats", repeats, METH_O, "The repeats field of prepared text (any Unicode)."},
    {"prepare", prepare, METH_VARARGS,
     "Lower-cased text made ready for tantivy: characters of a code point bitmap spaced,\n"
     "runs too long to be tokens removed."},
    {"count", count, METH_VARARGS,
     "Occurrences of ASCII phrases (tuples of bytes tokens) in UTF-8 text whose ASCII letters\n"
     "are lower-cased; None when a non-ASCII character is next to a possible occurrence or\n"
     "lower-cases to ASCII."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_speedups",
    .m_doc = "C speed-ups of ASCII token analysis.",
    .m_size = -1,
    .m_methods = METHODS,
};

PyMODINIT_FUNC PyInit__speedups(void) {
    for (int c = 0; c < 256; c++) {
        IS_TOKEN[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        CLASS[c] = c >= 128 ? UNKNOWN : IS_TOKEN[c] ? TOKEN : SEPARATOR;
    }
    return PyModule_Create(&MODULE);
}
