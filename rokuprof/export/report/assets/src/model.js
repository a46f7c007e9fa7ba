// The page's model: decoded once from the data in the page (decode.js), read by every view.
import { D } from "./data.js";
import { decodeModel } from "./decode.js";

const {
  T,
  threadName,
  nF,
  fnName,
  fnFile,
  fnThread,
  fnLine,
  N,
  parent,
  nodeFn,
  depth,
  nodeThread,
  kids,
  P,
  pathNode,
  COLS,
  pathCol,
  lanes,
  nodeSamples,
  SLOTS,
  heap,
  MEM,
  memWindow,
  memSums,
  heapAt,
  heapEnd,
  heapPeak,
  SESSION,
  marks,
  VITALS,
} = decodeModel(D);

export { COLS, MEM, N, P, SESSION, SLOTS, T, VITALS, depth, fnFile, fnLine, fnName, fnThread, heap, heapAt, heapEnd, heapPeak, kids, lanes, marks, memSums, memWindow, nF, nodeFn, nodeSamples, nodeThread, parent, pathCol, pathNode, threadName };
