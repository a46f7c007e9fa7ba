/* sampler_take: one delta of the Sentry sampler (see sampler_take.c). */
#ifndef ROKUPROF_SAMPLER_TAKE_H
#define ROKUPROF_SAMPLER_TAKE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

PyObject *sampler_take(PyObject *module, PyObject *args);

#endif
