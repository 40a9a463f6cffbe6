/* IndexBook (spec §4): per-value axes, domain and AxisMaps, kept beside the
 * Tiny IR without changing it.
 *
 * Every Tiny value gets an entry.  A movement value (VIEW, RESHAPE, PERMUTE,
 * EXPAND, PAD, SHRINK, FLIP) is composed down to the non-movement value it
 * views (its root): its single input carries the composed AxisMap and its
 * domain carries the piecewise definition (an in-bounds piece guarded by the
 * pad conditions, and a pad piece holding the pad value).  Computing values
 * (ALU, REDUCE, CONTRACT) read their operands through the views, so their
 * inputs name roots with composed maps and the guards of the view.
 * A CONTRACT becomes two entries, as in spec §4.5: the product "<out>.prod"
 * over output and reduce axes, and the reduction itself.
 * AxisMaps are affine + floordiv (sx); a view that needs more is non_scop.
 *
 * Maps are of two kinds (seed 003's two kinds of view), ib_map_kind:
 *  - Linear: every index and guard is quasi-affine (affine, plus floordiv and
 *    mod by integers): permute, reshape, expand, pad, shrink, and flip (a
 *    negative coefficient, N-1-i), and any composition of them;
 *  - IndexExpr: anything else, such as a modulo or a division by a symbol (a
 *    tile of a symbolic extent, i mod N; a reshape that divides by N), or
 *    an index loaded from another tensor (GATHER, `load_var`).  An
 *    IndexExpr view is non_scop: it ends the composition, is read as a root
 *    of its own, and becomes a region boundary (W2103 for a symbolic map). */
#ifndef DLC_INDEXBOOK_H
#define DLC_INDEXBOOK_H

#include <cJSON.h>

#include "tiny.h"

typedef enum { AX_ITER, AX_REDUCE, AX_BROADCAST } ib_axis_kind;

typedef struct ib_axis {
  int id;                /* unique in the book; kept across reduce (spec §4.4) */
  const char *name;      /* i0, i1, ... (r0, r1, ... for reduce axes) */
  const char *label;     /* semantic name (m, n, k, h, kh, ...) or NULL */
  const sx *size;
  ib_axis_kind kind;
} ib_axis;

/* lo <= e < hi, over the entry's axis names and signature dims (hi NULL:
 * unbounded above; only Region SSA makes such guards, for index comparisons). */
typedef struct ib_guard {
  const sx *e, *lo, *hi;
} ib_guard;

typedef enum { IBM_LINEAR, IBM_INDEX_EXPR } ib_map_kind;

/* One read of another value: the root value and the index into it. */
typedef struct ib_input {
  const char *value;     /* root value name */
  int entry;             /* its entry index */
  const char *via;       /* the view value it is read through, or NULL */
  int n;
  const sx **map;        /* index per root axis */
  int nguards;
  ib_guard *guards;      /* the read is in bounds iff all hold; else pad_value */
  double pad_value;
  bool is_const;         /* a CONST operand (no map) */
  ib_map_kind map_kind;  /* Linear unless a map or guard is not quasi-affine */
} ib_input;

typedef enum { IBK_LEAF, IBK_VIEW, IBK_ALU, IBK_REDUCE, IBK_PRODUCT, IBK_STORE } ib_kind;

typedef struct ib_entry {
  const char *value;     /* value name (the Tiny `out`, or "<out>.prod") */
  int uop;               /* Tiny node, or -1 for a product */
  ib_kind kind;
  int rank;
  ib_axis *axes;
  int nred;
  ib_axis *red;          /* REDUCE: the reduce axes its map uses */
  int *reduce_axes;      /* REDUCE: ids of the removed source axes */
  int nin;
  ib_input *in;
  /* VIEW: the piecewise domain; the in-bounds piece is `in[0].guards` */
  int ndiv_guards;
  const sx **div_guards; /* floor atoms introduced by reshape decomposition */
  bool non_scop;         /* a region boundary: an IndexExpr view, nested pads
                          * with different values, a layout conversion */
  const char *non_scop_why;
  ib_map_kind map_kind;  /* VIEW: the kind of its composed map (in[0]) */
  /* GATHER (a LoadIndex view): in[0] reads the source with this variable in
   * its map, standing for the value of in[1] (the index, read through its
   * own view) at the same point; guarded by 0 <= var < size, else 0.  NULL
   * for every other entry. */
  const char *load_var;
} ib_entry;

typedef struct indexbook {
  arena *A;
  const tiny_dag *dag;
  int n, cap;
  ib_entry *e;
  int *of_uop;           /* Tiny node -> entry */
  int next_axis_id;
  /* align_params: symbols derived by shape rules (P = floor((H-1)/2)+1) */
  int nderived;
  const char **dname;
  const sx **dval;
} indexbook;

/* Builds the book from a verified DAG, runs align_params and verifies it. */
indexbook *ib_build(arena *A, const tiny_dag *d, diag_list *dl);
/* Aligns every value with the Graph Signature (E1304 on a mismatch) and
 * binds derived symbols. */
bool ib_align_params(indexbook *b, diag_list *dl);
/* The §4.3 invariants. */
bool indexbook_verify(const indexbook *b, diag_list *dl);
/* {"index_book":{...}} */
cJSON *ib_dump(const indexbook *b);
int ib_find(const indexbook *b, const char *value);
const char *ib_map_kind_name(ib_map_kind k); /* "linear", "index_expr" */
/* Renders a map or guard expression with the entry's axis labels in place of
 * i-names (for dumps and for Poly-View), when labels are unique. */
char *ib_str_labeled(const indexbook *b, const ib_entry *e, const sx *x);
/* Variable name -> axis of entry e (iteration or reduce axis), or NULL. */
const ib_axis *ib_axis_by_name(const ib_entry *e, const char *name);

#endif
