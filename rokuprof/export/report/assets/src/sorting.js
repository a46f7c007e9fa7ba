// How the views' sortable tables order their rows: a pure function of a column and two rows (no
// DOM, so it is unit-tested in Node). tables.js draws the header that chooses the column.

// Two rows compared on a column (its get(row)): text in the locale's order, numbers by value, or
// by size (|v|) with `bySize` (a change that shrank is as big as one that grew).
function compareOn(col, a, b, bySize = false) {
  const va = col.get(a), vb = col.get(b);
  if (typeof va === "string") return va.localeCompare(vb);
  return bySize ? Math.abs(va) - Math.abs(vb) : va - vb;
}

export { compareOn };
