/* askkit.frame._kernels: the sources frame's per-row string rules in one pass each.
 *
 * Each function does in one pass over a column's bytes, without the GIL, what
 * the pyarrow.compute fallback in askkit/frame/columns.py does in several
 * whole-column kernels, so the reader's two threads run them side by side.
 * Every function reads Arrow string columns as their raw buffers (int32 or
 * int64 offsets, UTF-8 data) and returns new buffers as bytes objects;
 * askkit/frame/kernels.py wraps them and decides, in one place, whether they
 * are used. The tests check both paths against AskSource.from_chunk,
 * VaultPath and citations.scan.
 *
 * Inputs are checked (offsets inside the data, bitmaps long enough) with the
 * GIL held and then read without it: callers pass buffers no other thread
 * writes to (Arrow buffers are immutable; askkit's own arrays are private).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* --------------------------------------------------------------- helpers */

typedef struct {
    Py_buffer view;
    int held;
} Buf;

static int get_buf(PyObject *obj, Buf *b, const char *what)
{
    b->held = 0;
    if (obj == Py_None) {
        return 0;
    }
    if (PyObject_GetBuffer(obj, &b->view, PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Format(PyExc_TypeError, "%s: expected a contiguous buffer", what);
        return -1;
    }
    b->held = 1;
    return 0;
}

static void release(Buf *b)
{
    if (b->held) {
        PyBuffer_Release(&b->view);
        b->held = 0;
    }
}

/* Two buffer arguments (``format`` as for PyArg_ParseTuple, "OO:name"); -1 with
 * an error set and nothing held otherwise. */
static int two_buffers(PyObject *args, const char *format, Buf *a, const char *a_name, Buf *b,
                       const char *b_name)
{
    PyObject *a_obj, *b_obj;
    a->held = b->held = 0;
    if (!PyArg_ParseTuple(args, format, &a_obj, &b_obj) || get_buf(a_obj, a, a_name) < 0) {
        return -1;
    }
    if (get_buf(b_obj, b, b_name) < 0) {
        release(a);
        return -1;
    }
    return 0;
}

static inline int64_t offset_at(const Buf *offsets, int wide, Py_ssize_t i)
{
    return wide ? ((const int64_t *)offsets->view.buf)[i] : ((const int32_t *)offsets->view.buf)[i];
}

/* n of n + 1 offsets (int64 if ``wide``, else int32) that start at 0 or more, never
 * decrease and, with ``data``, stay inside it; -1 with an error set otherwise. */
static Py_ssize_t check_offsets(const Buf *offsets, int wide, const Buf *data, const char *what)
{
    Py_ssize_t size = wide ? (Py_ssize_t)sizeof(int64_t) : (Py_ssize_t)sizeof(int32_t);
    Py_ssize_t n = offsets->view.len / size - 1;
    if (n < 0 || offsets->view.len % size != 0) {
        PyErr_Format(PyExc_ValueError, "%s: expected n + 1 %s offsets", what,
                     wide ? "int64" : "int32");
        return -1;
    }
    if (offset_at(offsets, wide, 0) < 0) {
        PyErr_Format(PyExc_ValueError, "%s: offsets must not be negative", what);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (offset_at(offsets, wide, i) > offset_at(offsets, wide, i + 1)) {
            PyErr_Format(PyExc_ValueError, "%s: offsets must not decrease (row %zd)", what, i);
            return -1;
        }
    }
    if (data != NULL && offset_at(offsets, wide, n) > (int64_t)data->view.len) {
        PyErr_Format(PyExc_ValueError, "%s: offsets run past the data", what);
        return -1;
    }
    return n;
}

/* Bytes of the Rust whitespace character (Unicode White_Space) starting at s, or 0. */
static inline Py_ssize_t ws_at(const unsigned char *s, Py_ssize_t n)
{
    unsigned char c = s[0];
    if (c == 0x20 || (c >= 0x09 && c <= 0x0D)) {
        return 1;
    }
    if (c < 0xC2) {
        return 0;
    }
    if (c == 0xC2) { /* U+0085, U+00A0 */
        return (n >= 2 && (s[1] == 0x85 || s[1] == 0xA0)) ? 2 : 0;
    }
    if (n < 3) {
        return 0;
    }
    if (c == 0xE1) { /* U+1680 */
        return (s[1] == 0x9A && s[2] == 0x80) ? 3 : 0;
    }
    if (c == 0xE2) { /* U+2000..U+200A, U+2028, U+2029, U+202F, U+205F */
        if (s[1] == 0x80) {
            unsigned char t = s[2];
            return ((t >= 0x80 && t <= 0x8A) || t == 0xA8 || t == 0xA9 || t == 0xAF) ? 3 : 0;
        }
        return (s[1] == 0x81 && s[2] == 0x9F) ? 3 : 0;
    }
    if (c == 0xE3) { /* U+3000 */
        return (s[1] == 0x80 && s[2] == 0x80) ? 3 : 0;
    }
    return 0;
}

/* Bytes of the Rust whitespace character ending at s[n - 1], or 0 (valid UTF-8). */
static inline Py_ssize_t ws_before(const unsigned char *s, Py_ssize_t n)
{
    unsigned char c = s[n - 1];
    if (c == 0x20 || (c >= 0x09 && c <= 0x0D)) {
        return 1;
    }
    if (c < 0x80) {
        return 0;
    }
    if (n >= 2 && s[n - 2] == 0xC2) {
        return (c == 0x85 || c == 0xA0) ? 2 : 0;
    }
    if (n >= 3 && ws_at(s + n - 3, 3) == 3) {
        return 3;
    }
    return 0;
}

static inline void rust_trim(const unsigned char *d, Py_ssize_t *start, Py_ssize_t *end)
{
    Py_ssize_t s = *start, e = *end, k;
    while (s < e && (k = ws_at(d + s, e - s)) > 0) {
        s += k;
    }
    while (e > s && (k = ws_before(d + s, e - s)) > 0) {
        e -= k;
    }
    *start = s;
    *end = e;
}

/* How many of the bytes d[lo:hi] equal byte: the size of an output. */
static Py_ssize_t occurrences(const unsigned char *d, Py_ssize_t lo, Py_ssize_t hi, int byte)
{
    Py_ssize_t count = 0;
    const unsigned char *p = d + lo, *end = d + hi;
    while (p < end && (p = memchr(p, byte, (size_t)(end - p))) != NULL) {
        count++;
        p++;
    }
    return count;
}

/* New (offsets, data) bytes objects of a string column; -1 with an error set and
 * both NULL when memory runs out. */
static int new_column(Py_ssize_t n, Py_ssize_t capacity, PyObject **offsets, PyObject **data)
{
    *data = NULL;
    *offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * (Py_ssize_t)sizeof(int32_t));
    if (*offsets == NULL) {
        return -1;
    }
    *data = PyBytes_FromStringAndSize(NULL, capacity > 0 ? capacity : 1);
    if (*data == NULL) {
        Py_CLEAR(*offsets);
        return -1;
    }
    PyBytes_AS_STRING(*data)[0] = 0; /* an empty column's one byte is defined too */
    return 0;
}

/* (offsets, data) with data cut to ``used`` bytes; steals both references. */
static PyObject *finish_column(PyObject *offsets, PyObject *data, Py_ssize_t used)
{
    if (_PyBytes_Resize(&data, used > 0 ? used : 1) < 0) {
        Py_DECREF(offsets);
        return NULL;
    }
    return Py_BuildValue("(NN)", offsets, data);
}

/* ((offsets, data), (offsets, data)) of two new columns; steals all four references. */
static PyObject *finish_pair(PyObject *o1, PyObject *d1, Py_ssize_t used1, PyObject *o2,
                             PyObject *d2, Py_ssize_t used2)
{
    PyObject *first = finish_column(o1, d1, used1);
    if (first == NULL) {
        Py_DECREF(o2);
        Py_DECREF(d2);
        return NULL;
    }
    PyObject *second = finish_column(o2, d2, used2);
    if (second == NULL) {
        Py_DECREF(first);
        return NULL;
    }
    return Py_BuildValue("(NN)", first, second);
}

/* -------------------------------------------------------------- headings */

static const unsigned char JOINER[5] = {0x20, 0xE2, 0x80, 0xBA, 0x20}; /* " › " */

PyDoc_STRVAR(headings_doc,
"headings(offsets, data, date_offsets, date_data, date_valid, date_bit_offset)\n"
"--\n\n"
"kimun's heading_from_title and match_heading over a string column without\n"
"nulls: Rust trim, the date prefix dropped (then trimmed again), the U+001F\n"
"breadcrumb's non-empty segments joined with ' \\u203a ', and the part after the\n"
"heading's last joiner. ``date_*`` describe the wire date column of the same\n"
"length (``date_valid`` its Arrow validity bitmap or None, with its bit\n"
"offset). Returns ((heading offsets, heading data), (match offsets, match\n"
"data)), or None when a heading column would pass 2 GiB.");

static PyObject *headings(PyObject *self, PyObject *args)
{
    PyObject *o_obj, *d_obj, *do_obj, *dd_obj, *dv_obj;
    Py_ssize_t bit0;
    if (!PyArg_ParseTuple(args, "OOOOOn:headings", &o_obj, &d_obj, &do_obj, &dd_obj, &dv_obj,
                          &bit0)) {
        return NULL;
    }
    Buf off = {0}, dat = {0}, doff = {0}, ddat = {0}, dval = {0};
    PyObject *h_off = NULL, *h_dat = NULL, *m_off = NULL, *m_dat = NULL, *result = NULL;
    if (get_buf(o_obj, &off, "offsets") < 0 || get_buf(d_obj, &dat, "data") < 0 ||
        get_buf(do_obj, &doff, "date_offsets") < 0 || get_buf(dd_obj, &ddat, "date_data") < 0 ||
        get_buf(dv_obj, &dval, "date_valid") < 0) {
        goto done;
    }
    Py_ssize_t n = check_offsets(&off, 0, &dat, "offsets");
    if (n < 0) {
        goto done;
    }
    if (check_offsets(&doff, 0, &ddat, "date_offsets") != n) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "date column: expected as many rows as titles");
        }
        goto done;
    }
    if (dval.held && bit0 < 0) {
        PyErr_SetString(PyExc_ValueError, "date_bit_offset must not be negative");
        goto done;
    }
    if (dval.held && (n > dval.view.len * 8 || bit0 > dval.view.len * 8 - n)) {
        PyErr_SetString(PyExc_ValueError, "date_valid: bitmap shorter than the column");
        goto done;
    }
    const int32_t *o = (const int32_t *)off.view.buf;
    const int32_t *dof = (const int32_t *)doff.view.buf;
    const unsigned char *d = (const unsigned char *)dat.view.buf;
    const unsigned char *dd = (const unsigned char *)ddat.view.buf;
    const unsigned char *dv = dval.held ? (const unsigned char *)dval.view.buf : NULL;
    Py_ssize_t seps = occurrences(d, o[0], o[n], 0x1F);
    Py_ssize_t capacity = (Py_ssize_t)(o[n] - o[0]) + 4 * seps;
    if (capacity > INT32_MAX) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (new_column(n, capacity, &h_off, &h_dat) < 0 || new_column(n, capacity, &m_off, &m_dat) < 0) {
        goto done;
    }
    int32_t *ho = (int32_t *)PyBytes_AS_STRING(h_off);
    int32_t *mo = (int32_t *)PyBytes_AS_STRING(m_off);
    unsigned char *h = (unsigned char *)PyBytes_AS_STRING(h_dat);
    unsigned char *m = (unsigned char *)PyBytes_AS_STRING(m_dat);
    Py_ssize_t hp = 0, mp = 0;
    Py_BEGIN_ALLOW_THREADS
    ho[0] = 0;
    mo[0] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t s = o[i], e = o[i + 1];
        rust_trim(d, &s, &e);
        int has_date = dv == NULL || ((dv[(bit0 + i) >> 3] >> ((bit0 + i) & 7)) & 1);
        if (has_date) {
            Py_ssize_t dl = dof[i + 1] - dof[i];
            if (e - s >= dl && memcmp(d + s, dd + dof[i], (size_t)dl) == 0) {
                s += dl;
                rust_trim(d, &s, &e);
            }
        }
        Py_ssize_t row = hp, seg = s, tail = hp;
        while (seg <= e) {
            const unsigned char *sep = seg < e ? memchr(d + seg, 0x1F, (size_t)(e - seg)) : NULL;
            Py_ssize_t stop = sep ? (Py_ssize_t)(sep - d) : e;
            if (stop > seg) {
                if (hp > row) {
                    memcpy(h + hp, JOINER, 5);
                    hp += 5;
                }
                tail = hp;
                memcpy(h + hp, d + seg, (size_t)(stop - seg));
                hp += stop - seg;
            }
            seg = stop + 1;
        }
        ho[i + 1] = (int32_t)hp;
        /* rpartition(" › "): without a 0xBA byte ("›" ends in it) in the title, the
         * joiners written above are the only ones, so the last segment is the tail;
         * otherwise search the heading for its last joiner, wherever it came from */
        if (s < e && memchr(d + s, 0xBA, (size_t)(e - s)) != NULL) {
            tail = row;
            for (Py_ssize_t j = hp - 5; j >= row; j--) {
                if (h[j + 3] == 0xBA && memcmp(h + j, JOINER, 5) == 0) {
                    tail = j + 5;
                    break;
                }
            }
        }
        memcpy(m + mp, h + tail, (size_t)(hp - tail));
        mp += hp - tail;
        mo[i + 1] = (int32_t)mp;
    }
    Py_END_ALLOW_THREADS
    result = finish_pair(h_off, h_dat, hp, m_off, m_dat, mp);
    h_off = h_dat = m_off = m_dat = NULL;
done:
    Py_XDECREF(h_off);
    Py_XDECREF(h_dat);
    Py_XDECREF(m_off);
    Py_XDECREF(m_dat);
    release(&off);
    release(&dat);
    release(&doff);
    release(&ddat);
    release(&dval);
    return result;
}

/* ----------------------------------------------------------------- paths */

/* Bytes of a plain path: a-z 0-9 _ - . / */
static unsigned char PLAIN[256];

static int device_at(const unsigned char *d, Py_ssize_t at, Py_ssize_t end)
{
    if (end - at < 3) {
        return 0;
    }
    const unsigned char *p = d + at;
    Py_ssize_t next = at + 3;
    if (!memcmp(p, "con", 3) || !memcmp(p, "prn", 3) || !memcmp(p, "aux", 3) ||
        !memcmp(p, "nul", 3)) {
        /* the name, then "." and anything up to "/", or "/", or the end */
    } else if ((!memcmp(p, "com", 3) || !memcmp(p, "lpt", 3)) && next < end && d[next] >= '1' &&
               d[next] <= '9') {
        next++;
    } else {
        return 0;
    }
    return next == end || d[next] == '/' || d[next] == '.';
}

PyDoc_STRVAR(plain_paths_doc,
"plain_paths(offsets, data)\n"
"--\n\n"
"((note offsets, note data), (folder offsets, folder data)) of a path column\n"
"without nulls when every row is a plain path (lowercase ASCII parts of\n"
"a-z 0-9 _ - ., none blank, dot-led, dot-ended or a Windows device name), the\n"
"form VaultPath prints unchanged; None when any row is not.");

static PyObject *plain_paths(PyObject *self, PyObject *args)
{
    Buf off, dat;
    if (two_buffers(args, "OO:plain_paths", &off, "offsets", &dat, "data") < 0) {
        return NULL;
    }
    PyObject *n_off = NULL, *n_dat = NULL, *f_off = NULL, *f_dat = NULL, *result = NULL;
    Py_ssize_t n = check_offsets(&off, 0, &dat, "offsets");
    if (n < 0) {
        goto done;
    }
    const int32_t *o = (const int32_t *)off.view.buf;
    const unsigned char *d = (const unsigned char *)dat.view.buf;
    Py_ssize_t capacity = o[n] - o[0];
    if (new_column(n, capacity, &n_off, &n_dat) < 0 || new_column(n, capacity, &f_off, &f_dat) < 0) {
        goto done;
    }
    int32_t *no = (int32_t *)PyBytes_AS_STRING(n_off);
    int32_t *fo = (int32_t *)PyBytes_AS_STRING(f_off);
    unsigned char *nd = (unsigned char *)PyBytes_AS_STRING(n_dat);
    unsigned char *fd = (unsigned char *)PyBytes_AS_STRING(f_dat);
    Py_ssize_t np_ = 0, fp = 0;
    int plain = 1;
    Py_BEGIN_ALLOW_THREADS
    no[0] = 0;
    fo[0] = 0;
    for (Py_ssize_t i = 0; i < n && plain; i++) {
        Py_ssize_t s = o[i], e = o[i + 1], last = -1;
        if (e <= s || d[s] == '.' || d[s] == '/' || d[e - 1] == '.' || d[e - 1] == '/' ||
            device_at(d, s, e)) {
            plain = 0;
            break;
        }
        int punct = 0;
        for (Py_ssize_t j = s; j < e; j++) {
            unsigned char c = d[j];
            if (!PLAIN[c]) {
                plain = 0;
                break;
            }
            int p = c == '.' || c == '/';
            if (p && punct) { /* "//", "/.", "./", "..": a blank, dot-led or dot-ended part */
                plain = 0;
                break;
            }
            punct = p;
            if (c == '/') {
                last = j;
                if (device_at(d, j + 1, e)) {
                    plain = 0;
                    break;
                }
            }
        }
        if (!plain) {
            break;
        }
        Py_ssize_t name = last >= 0 ? last + 1 : s, stop = e;
        if (e - name >= 3 && !memcmp(d + e - 3, ".md", 3)) {
            stop = e - 3;
        }
        memcpy(nd + np_, d + name, (size_t)(stop - name));
        np_ += stop - name;
        no[i + 1] = (int32_t)np_;
        if (last >= 0) {
            memcpy(fd + fp, d + s, (size_t)(last - s));
            fp += last - s;
        }
        fo[i + 1] = (int32_t)fp;
    }
    Py_END_ALLOW_THREADS
    if (!plain) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = finish_pair(n_off, n_dat, np_, f_off, f_dat, fp);
    n_off = n_dat = f_off = f_dat = NULL;
done:
    Py_XDECREF(n_off);
    Py_XDECREF(n_dat);
    Py_XDECREF(f_off);
    Py_XDECREF(f_dat);
    release(&off);
    release(&dat);
    return result;
}

/* ------------------------------------------------------------- citations */

PyDoc_STRVAR(citations_doc,
"citations(offsets, data)\n"
"--\n\n"
"Citation markers of each answer in a string column given as int64 offsets\n"
"and data: every '[' followed by ASCII digits and ']' inside one answer.\n"
"Returns (answer index, number) as two int64 bytes objects, numbers above\n"
"2**63 - 1 and zeros left out, and a bytes object with 1 for each answer\n"
"holding '[[' or ']]', whose markers are left to the full scanner.");

static PyObject *citations(PyObject *self, PyObject *args)
{
    Buf off, dat;
    if (two_buffers(args, "OO:citations", &off, "offsets", &dat, "data") < 0) {
        return NULL;
    }
    PyObject *turns = NULL, *numbers = NULL, *skipped = NULL, *result = NULL;
    Py_ssize_t n = check_offsets(&off, 1, &dat, "offsets");
    if (n < 0) {
        goto done;
    }
    const int64_t *o = (const int64_t *)off.view.buf;
    const unsigned char *d = (const unsigned char *)dat.view.buf;
    Py_ssize_t opens = occurrences(d, (Py_ssize_t)o[0], (Py_ssize_t)o[n], '[');
    if ((turns = PyBytes_FromStringAndSize(NULL, (opens + 1) * 8)) == NULL ||
        (numbers = PyBytes_FromStringAndSize(NULL, (opens + 1) * 8)) == NULL ||
        (skipped = PyBytes_FromStringAndSize(NULL, n > 0 ? n : 1)) == NULL) {
        goto done;
    }
    int64_t *t = (int64_t *)PyBytes_AS_STRING(turns);
    int64_t *v = (int64_t *)PyBytes_AS_STRING(numbers);
    unsigned char *sk = (unsigned char *)PyBytes_AS_STRING(skipped);
    Py_ssize_t found = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        const unsigned char *start = d + o[i], *end = d + o[i + 1], *p = start;
        Py_ssize_t row = found;
        sk[i] = 0;
        /* "]]" anywhere in the answer: kimun's scanner skips adjacent markers */
        while (p < end && (p = memchr(p, ']', (size_t)(end - p))) != NULL) {
            if (p + 1 < end && p[1] == ']') {
                sk[i] = 1;
                break;
            }
            p++;
        }
        p = start;
        while (!sk[i] && p < end && (p = memchr(p, '[', (size_t)(end - p))) != NULL) {
            const unsigned char *q = p + 1;
            if (q < end && *q == '[') { /* "[[": the same */
                sk[i] = 1;
                break;
            }
            uint64_t value = 0;
            int overflow = 0;
            while (q < end && *q >= '0' && *q <= '9') {
                unsigned digit = (unsigned)(*q - '0');
                if (value > ((uint64_t)INT64_MAX - digit) / 10) {
                    overflow = 1;
                } else {
                    value = value * 10 + digit;
                }
                q++;
            }
            if (q > p + 1 && q < end && *q == ']' && !overflow && value > 0) {
                t[found] = (int64_t)i;
                v[found] = (int64_t)value;
                found++;
            }
            p = q;
        }
        if (sk[i]) {
            found = row; /* the scanner reads this answer instead */
        }
    }
    Py_END_ALLOW_THREADS
    if (_PyBytes_Resize(&turns, found * (Py_ssize_t)sizeof(int64_t)) < 0) {
        turns = NULL;
        goto done;
    }
    if (_PyBytes_Resize(&numbers, found * (Py_ssize_t)sizeof(int64_t)) < 0) {
        numbers = NULL;
        goto done;
    }
    if (n == 0 && _PyBytes_Resize(&skipped, 0) < 0) {
        skipped = NULL;
        goto done;
    }
    result = Py_BuildValue("(OOO)", turns, numbers, skipped);
done:
    Py_XDECREF(turns);
    Py_XDECREF(numbers);
    Py_XDECREF(skipped);
    release(&off);
    release(&dat);
    return result;
}

/* ------------------------------------------------------------ statistics */

/* numpy's nan_to_num: NaN to 0, infinities to the largest finite values. */
static inline double nan_to_num(double x)
{
    if (isnan(x)) {
        return 0.0;
    }
    if (isinf(x)) {
        return x > 0 ? DBL_MAX : -DBL_MAX;
    }
    return x;
}

PyDoc_STRVAR(turn_stats_doc,
"turn_stats(bounds, scores)\n"
"--\n\n"
"Per-turn score columns of float64 ``scores`` (no NaN) whose turns are the\n"
"runs ``bounds[t]:bounds[t + 1]`` (int64, from 0 to len(scores)): the rank by\n"
"score (descending, ties share the lowest), the gap to the turn's top score and\n"
"the z-score within the turn (0 without spread). Sums run left to right and\n"
"every operation is the one askkit's fallback does, so the values are equal\n"
"to the last bit. Returns three bytes objects (int64, float64, float64).");

static PyObject *turn_stats(PyObject *self, PyObject *args)
{
    Buf bnd, sco;
    if (two_buffers(args, "OO:turn_stats", &bnd, "bounds", &sco, "scores") < 0) {
        return NULL;
    }
    PyObject *rank = NULL, *gap = NULL, *z = NULL, *result = NULL;
    Py_ssize_t turns = check_offsets(&bnd, 1, NULL, "bounds");
    if (turns < 0) {
        goto done;
    }
    Py_ssize_t n = sco.view.len / (Py_ssize_t)sizeof(double);
    const int64_t *b = (const int64_t *)bnd.view.buf;
    const double *s = (const double *)sco.view.buf;
    if (sco.view.len % (Py_ssize_t)sizeof(double) != 0) {
        PyErr_SetString(PyExc_ValueError, "scores: expected float64 values");
        goto done;
    }
    if (b[0] != 0 || b[turns] != n) {
        PyErr_SetString(PyExc_ValueError, "bounds: expected to run from 0 to len(scores)");
        goto done;
    }
    if ((rank = PyBytes_FromStringAndSize(NULL, n * 8)) == NULL ||
        (gap = PyBytes_FromStringAndSize(NULL, n * 8)) == NULL ||
        (z = PyBytes_FromStringAndSize(NULL, n * 8)) == NULL) {
        goto done; /* int64 and float64: 8 bytes each */
    }
    int64_t *r = (int64_t *)PyBytes_AS_STRING(rank);
    double *g = (double *)PyBytes_AS_STRING(gap);
    double *zz = (double *)PyBytes_AS_STRING(z);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t t = 0; t < turns; t++) {
        Py_ssize_t lo = (Py_ssize_t)b[t], hi = (Py_ssize_t)b[t + 1];
        if (lo == hi) {
            continue;
        }
        double top = s[lo], low = s[lo], total = 0.0, squares = 0.0;
        for (Py_ssize_t i = lo; i < hi; i++) {
            top = s[i] > top ? s[i] : top;
            low = s[i] < low ? s[i] : low;
            total += nan_to_num(s[i]);
        }
        top += 0.0; /* one zero: a top of -0.0 reads as 0.0 */
        double size = (double)(hi - lo);
        double mean = total / size;
        for (Py_ssize_t i = lo; i < hi; i++) {
            double dev = s[i] - mean;
            squares += nan_to_num(dev * dev);
        }
        double std = sqrt(squares / size);
        int spread = std > 0 && top > low;
        for (Py_ssize_t i = lo; i < hi; i++) {
            int64_t higher = 0;
            for (Py_ssize_t j = lo; j < hi; j++) {
                higher += s[j] > s[i];
            }
            r[i] = higher + 1;
            g[i] = top - s[i];
            zz[i] = spread ? (s[i] - mean) / std : 0.0;
        }
    }
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(OOO)", rank, gap, z);
done:
    Py_XDECREF(rank);
    Py_XDECREF(gap);
    Py_XDECREF(z);
    release(&bnd);
    release(&sco);
    return result;
}

/* ---------------------------------------------------------- attr_strings */

PyDoc_STRVAR(attr_strings_doc,
"attr_strings(objects, names)\n"
"--\n\n"
"Arrow string columns of the objects in a list, one per entry of the tuple\n"
"``names``: the attribute of that name of every object, or the object itself\n"
"for a None entry. Each column is (offsets, data, validity): int32 offsets and\n"
"UTF-8 data as bytes, validity an Arrow bitmap (bytes) or None when no value is\n"
"None. Returns None when a value is neither a str nor None, a str does not\n"
"encode as UTF-8 (a lone surrogate) or a column would pass 2 GiB: the caller's\n"
"fallback then decides, with its own errors.");

/* One column; a new (offsets, data, validity) tuple, Py_None (borrowed, not
 * counted) when the column is not a plain string column, NULL with an error set
 * when memory runs out. */
static PyObject *attr_column(PyObject *items, PyObject *name)
{
    Py_ssize_t n = PyTuple_GET_SIZE(items);
    Py_ssize_t capacity = n * 16 + 64, used = 0, nulls = 0;
    PyObject *offsets = NULL, *data = NULL, *valid = NULL, *value = NULL;
    if (new_column(n, capacity, &offsets, &data) < 0) {
        return NULL;
    }
    valid = PyBytes_FromStringAndSize(NULL, (n + 7) / 8 + 1);
    if (valid == NULL) {
        goto fail;
    }
    unsigned char *bits = (unsigned char *)PyBytes_AS_STRING(valid);
    memset(bits, 0xFF, (size_t)((n + 7) / 8 + 1));
    int32_t *o = (int32_t *)PyBytes_AS_STRING(offsets);
    o[0] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(items, i);
        if (name == Py_None) {
            value = Py_NewRef(item);
        } else {
            value = PyObject_GetAttr(item, name);
            if (value == NULL) {
                goto plain_fail; /* the fallback raises its own AttributeError */
            }
        }
        if (value == Py_None) {
            bits[i >> 3] &= (unsigned char)~(1u << (i & 7));
            nulls++;
        } else if (PyUnicode_Check(value)) {
            Py_ssize_t size;
            const char *utf8 = PyUnicode_AsUTF8AndSize(value, &size);
            if (utf8 == NULL) {
                goto plain_fail;
            }
            if (size > INT32_MAX - used) {
                goto plain_fail;
            }
            if (used + size > capacity) {
                Py_ssize_t grown = capacity * 2;
                if (grown < used + size) {
                    grown = used + size;
                }
                if (_PyBytes_Resize(&data, grown) < 0) {
                    goto fail; /* data is NULL now */
                }
                capacity = grown;
            }
            memcpy(PyBytes_AS_STRING(data) + used, utf8, (size_t)size);
            used += size;
        } else {
            goto plain_fail;
        }
        Py_CLEAR(value);
        o[i + 1] = (int32_t)used;
    }
    if (nulls == 0) {
        Py_CLEAR(valid);
        valid = Py_NewRef(Py_None);
    }
    PyObject *column = finish_column(offsets, data, used);
    if (column == NULL) {
        Py_DECREF(valid);
        return NULL;
    }
    PyObject *result = Py_BuildValue("(OON)", PyTuple_GET_ITEM(column, 0),
                                     PyTuple_GET_ITEM(column, 1), valid);
    Py_DECREF(column);
    return result;
plain_fail:
    PyErr_Clear();
    Py_XDECREF(value);
    Py_XDECREF(offsets);
    Py_XDECREF(data);
    Py_XDECREF(valid);
    return Py_None;
fail:
    Py_XDECREF(value);
    Py_XDECREF(offsets);
    Py_XDECREF(data);
    Py_XDECREF(valid);
    return NULL;
}

static PyObject *attr_strings(PyObject *self, PyObject *args)
{
    PyObject *objects, *names;
    if (!PyArg_ParseTuple(args, "O!O!:attr_strings", &PyList_Type, &objects, &PyTuple_Type,
                          &names)) {
        return NULL;
    }
    Py_ssize_t k = PyTuple_GET_SIZE(names);
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *name = PyTuple_GET_ITEM(names, j);
        if (name != Py_None && !PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "attr_strings: names must be str or None");
            return NULL;
        }
    }
    /* a tuple copy: attribute lookups may run Python code that changes the list */
    PyObject *items = PyList_AsTuple(objects);
    if (items == NULL) {
        return NULL;
    }
    PyObject *result = PyTuple_New(k);
    if (result == NULL) {
        Py_DECREF(items);
        return NULL;
    }
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *column = attr_column(items, PyTuple_GET_ITEM(names, j));
        if (column == NULL) {
            Py_DECREF(result);
            Py_DECREF(items);
            return NULL;
        }
        if (column == Py_None) {
            Py_DECREF(result);
            Py_DECREF(items);
            Py_RETURN_NONE;
        }
        PyTuple_SET_ITEM(result, j, column);
    }
    Py_DECREF(items);
    return result;
}

/* ---------------------------------------------------------------- module */

static PyMethodDef methods[] = {
    {"headings", headings, METH_VARARGS, headings_doc},
    {"plain_paths", plain_paths, METH_VARARGS, plain_paths_doc},
    {"citations", citations, METH_VARARGS, citations_doc},
    {"turn_stats", turn_stats, METH_VARARGS, turn_stats_doc},
    {"attr_strings", attr_strings, METH_VARARGS, attr_strings_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "askkit.frame._kernels",
    "The sources frame's per-row string rules in compiled loops (see askkit.frame.kernels).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__kernels(void)
{
    for (int c = 'a'; c <= 'z'; c++) {
        PLAIN[c] = 1;
    }
    for (int c = '0'; c <= '9'; c++) {
        PLAIN[c] = 1;
    }
    PLAIN['_'] = PLAIN['-'] = PLAIN['.'] = PLAIN['/'] = 1;
    return PyModule_Create(&module);
}
