/*
 * sampler_take(items, rest, carry, units, hz): one delta of rokuprof.sentry.sampling.Sampler
 * in C, with the same effect on rest and carry and the same result as Sampler.take.
 *
 * items: a list of (thread, call path, wall) tuples in stream order; rest: call path -> ticks
 * not yet sampled; carry: thread -> the sum of its paths' rests less what it is owed. Returns
 * the list of (thread, call path, samples) with samples > 0, or None, having changed nothing,
 * when a number lies outside the range this code computes exactly in 64 bits (Python's own
 * take then does the work with its unbounded integers).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>

#include "sampler_take.h"

/* Every wall, rest and carry at most this large in magnitude, and units * hz too: sums and
 * products of a few of them stay far inside 64 bits. */
#define LIMIT ((int64_t)1 << 52)

typedef struct {
    Py_ssize_t thread; /* the thread's rank: the order its first positive path came in */
    int64_t gap;       /* units - rest: the largest rest first */
    Py_ssize_t at;     /* then stream order (the item's index) */
} owed_path;

static int by_thread_gap(const void *a, const void *b)
{
    const owed_path *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->gap != y->gap)
        return x->gap < y->gap ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* An exact int within LIMIT, else 0 (*ok cleared). */
static int64_t small(PyObject *value, int *ok)
{
    if (!PyLong_CheckExact(value)) {
        *ok = 0;
        return 0;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow || v > LIMIT || v < -LIMIT) {
        *ok = 0;
        return 0;
    }
    return (int64_t)v;
}

/* The value of key in dict as a small int (0 when absent); *ok cleared when it is not one. */
static int64_t small_get(PyObject *dict, PyObject *key, int *ok)
{
    PyObject *value = PyDict_GetItemWithError(dict, key);
    if (!value)
        return 0;
    return small(value, ok);
}

static int set_small(PyObject *dict, PyObject *key, int64_t value)
{
    PyObject *number = PyLong_FromLongLong(value);
    if (!number)
        return -1;
    int failed = PyDict_SetItem(dict, key, number);
    Py_DECREF(number);
    return failed;
}

PyObject *sampler_take(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *items, *rest, *carry;
    long long units, hz;
    if (!PyArg_ParseTuple(args, "O!O!O!LL", &PyList_Type, &items, &PyDict_Type, &rest,
                          &PyDict_Type, &carry, &units, &hz))
        return NULL;
    if (units < 1 || hz < 1 || units > LIMIT || hz > LIMIT / units)
        Py_RETURN_NONE;
    Py_ssize_t count = PyList_GET_SIZE(items);
    /* First a pass that changes nothing: every number in range, or Python does it all. */
    int ok = 1;
    for (Py_ssize_t i = 0; i < count && ok; i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3) {
            ok = 0;
            break;
        }
        int64_t wall = small(PyTuple_GET_ITEM(item, 2), &ok);
        if (ok && (wall > LIMIT / hz || wall < -LIMIT / hz))
            ok = 0;
        small_get(rest, PyTuple_GET_ITEM(item, 1), &ok);
        small_get(carry, PyTuple_GET_ITEM(item, 0), &ok);
        if (PyErr_Occurred())
            return NULL; /* an unhashable key */
    }
    if (!ok)
        Py_RETURN_NONE;
    int64_t *counts = calloc((size_t)count + 1, sizeof(int64_t));
    owed_path *positive = malloc(((size_t)count + 1) * sizeof(owed_path));
    PyObject *ranks = PyDict_New(); /* thread -> its rank, in the order of its first positive */
    PyObject **threads = malloc(((size_t)count + 1) * sizeof(PyObject *)); /* by rank */
    PyObject *result = NULL;
    Py_ssize_t held = 0;
    if (!counts || !positive || !ranks || !threads) {
        if (ranks)
            PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        PyObject *thread = PyTuple_GET_ITEM(item, 0), *path = PyTuple_GET_ITEM(item, 1);
        int64_t wall = small(PyTuple_GET_ITEM(item, 2), &ok);
        int64_t before = small_get(rest, path, &ok);
        if (PyErr_Occurred())
            goto done;
        int64_t r = before + wall * hz, n = 0;
        if (r >= units) {
            n = r / units;
            r -= n * units;
        }
        if (r) {
            if (set_small(rest, path, r) < 0)
                goto done;
            if (r > 0) {
                PyObject *rank = PyDict_GetItemWithError(ranks, thread);
                if (!rank) {
                    if (PyErr_Occurred())
                        goto done;
                    rank = PyLong_FromSsize_t(PyDict_GET_SIZE(ranks));
                    if (!rank || PyDict_SetItem(ranks, thread, rank) < 0) {
                        Py_XDECREF(rank);
                        goto done;
                    }
                    Py_DECREF(rank); /* the dict holds it */
                    threads[PyDict_GET_SIZE(ranks) - 1] = thread;
                }
                positive[held++] = (owed_path){PyLong_AsSsize_t(rank), units - r, i};
            }
        } else if (before) {
            if (PyDict_DelItem(rest, path) < 0)
                goto done;
        }
        int64_t sum = small_get(carry, thread, &ok);
        if (PyErr_Occurred() || set_small(carry, thread, sum + r - before) < 0)
            goto done;
        counts[i] = n;
    }
    /* Each thread owed whole periods gives one more sample to as many of its positive paths,
     * the largest rests first (threads in the order their first positive path came). */
    qsort(positive, (size_t)held, sizeof(owed_path), by_thread_gap);
    for (Py_ssize_t start = 0, end; start < held; start = end) {
        Py_ssize_t rank = positive[start].thread;
        for (end = start; end < held && positive[end].thread == rank; end++)
            ;
        PyObject *thread = threads[rank];
        int64_t sum = small_get(carry, thread, &ok);
        if (PyErr_Occurred())
            goto done;
        int64_t owed = sum >= 0 ? sum / units : -1; /* Python's floor: <= 0 either way */
        if (owed > end - start)
            owed = end - start;
        if (owed <= 0)
            continue;
        for (Py_ssize_t j = start; j < start + owed; j++) {
            Py_ssize_t at = positive[j].at;
            PyObject *path = PyTuple_GET_ITEM(PyList_GET_ITEM(items, at), 1);
            counts[at] += 1;
            int64_t left = small_get(rest, path, &ok);
            if (PyErr_Occurred() || set_small(rest, path, left - units) < 0)
                goto done;
        }
        if (set_small(carry, thread, sum - owed * units) < 0)
            goto done;
    }
    result = PyList_New(0);
    for (Py_ssize_t i = 0; result && i < count; i++) {
        if (!counts[i])
            continue;
        PyObject *item = PyList_GET_ITEM(items, i);
        PyObject *n = PyLong_FromLongLong(counts[i]);
        PyObject *out = n ? PyTuple_Pack(3, PyTuple_GET_ITEM(item, 0),
                                         PyTuple_GET_ITEM(item, 1), n)
                          : NULL;
        Py_XDECREF(n);
        if (!out || PyList_Append(result, out) < 0) {
            Py_XDECREF(out);
            Py_CLEAR(result);
            break;
        }
        Py_DECREF(out);
    }
done:
    free(counts);
    free(positive);
    free(threads);
    Py_XDECREF(ranks);
    return result;
}
