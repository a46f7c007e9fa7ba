// The Bottom-up tab's index over the call tree and its sums. Pure: the tree ({N, T, kids, nodeFn,
// nF, parent}) and the figures are arguments, so that it is unit-tested in Node.
// treeIndex: the nodes in pre-order with where each subtree ends, and each function's frames in
// pre-order (a walk with an explicit stack: no recursion however deep the tree).

function treeIndex({ N, T, kids, nodeFn, nF }) {
  const pre = new Int32Array(N), end = new Int32Array(N), order = new Int32Array(N);
  let i = 0;
  const stack = [];
  for (let t = T - 1; t >= 0; t--) stack.push(t);
  while (stack.length) {
    const n = stack.pop();
    if (n < 0) {
      end[~n] = i;
      continue;
    }
    order[i] = n;
    pre[n] = i++;
    stack.push(~n);
    const ks = kids[n];
    for (let k = ks.length - 1; k >= 0; k--) stack.push(ks[k]);
  }
  // each function's frames in pre-order
  const fnStart = new Int32Array(nF + 1);
  for (let n = 0; n < N; n++) if (nodeFn[n] >= 0) fnStart[nodeFn[n] + 1]++;
  for (let f = 0; f < nF; f++) fnStart[f + 1] += fnStart[f];
  const fill = fnStart.slice(0, nF);
  const fnNodes = new Int32Array(fnStart[nF]);
  for (let j = 0; j < i; j++) {
    const f = nodeFn[order[j]];
    if (f >= 0) fnNodes[fill[f]++] = order[j];
  }
  return { pre, end, fnStart, fnNodes };
}
// The chains one caller longer: the frames grouped by the function above the chain's last one.
function chainCallers(c, { parent, nodeFn }) {
  const groups = new Map();
  for (let i = 0; i < c.frames.length; i++) {
    const up = parent[c.tips[i]];
    const g = up >= 0 ? nodeFn[up] : -1;
    if (g < 0) continue; // called by the thread itself
    let x = groups.get(g);
    if (!x) groups.set(g, (x = { frames: [], tips: [] }));
    x.frames.push(c.frames[i]);
    x.tips.push(up);
  }
  return [...groups].map(([g, x]) => ({ key: `${c.key},${g}`, fn: g, depth: c.depth + 1, frames: Int32Array.from(x.frames), tips: Int32Array.from(x.tips), callers: null }));
}
// What f calls: per callee, its frames right below one of f's (in pre-order).
function calleesOf(f, { kids, nodeFn }, index) {
  const groups = new Map();
  for (let i = index.fnStart[f]; i < index.fnStart[f + 1]; i++) {
    for (const k of kids[index.fnNodes[i]]) {
      let x = groups.get(nodeFn[k]);
      if (!x) groups.set(nodeFn[k], (x = []));
      x.push(k);
    }
  }
  return [...groups].map(([h, ks]) => ({ fn: h, frames: Int32Array.from(ks).sort((a, b) => index.pre[a] - index.pre[b]) }));
}
// [self, total] of frames in pre-order, for metric m: a frame inside one already counted adds
// its self but not its total (its call paths are counted).
function framesFigures(frames, s, t, { pre, end }) {
  let selfSum = 0, totalSum = 0, endAt = -1;
  for (let i = 0; i < frames.length; i++) {
    const n = frames[i];
    selfSum += s[n];
    if (pre[n] < endAt) continue;
    totalSum += t[n];
    endAt = end[n];
  }
  return [selfSum, totalSum];
}

export { calleesOf, chainCallers, framesFigures, treeIndex };
