/* The null backend's record of the last launch (backend_null.c). */
#ifndef DLC_NULL_H
#define DLC_NULL_H

#include "dlc_internal.h"

typedef struct dlc__null_launch {
  const dlc__kernel *kernel; /* the row dispatch chose */
  unsigned grid[3];
  long count;                /* launches so far on this thread */
} dlc__null_launch;

/* This thread's last launch. */
const dlc__null_launch *dlc__null_last(void);

#endif
