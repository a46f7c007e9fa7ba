/* samples_text: a Sentry chunk's samples as JSON text (see samples_text.c). */
#ifndef ROKUPROF_SAMPLES_TEXT_H
#define ROKUPROF_SAMPLES_TEXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

PyObject *samples_text(PyObject *module, PyObject *args);

#endif
