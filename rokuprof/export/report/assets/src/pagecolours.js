// The page's colours: its threads' (by name, see colours.js) and the legend's order of files.
import { D } from "./data.js";
import { threadColours } from "./colours.js";
import { P, fnFile, nF, nodeFn, pathCol, pathNode } from "./model.js";

const threadColour = threadColours(D.threads.map(([, s]) => D.strings[s]));
// The files in the legend: most wall time first (the order only, never the colour).
const fileOrder = new Map();
{
  const wallByFile = new Map();
  for (let p = 0; p < P; p++) {
    const f = fnFile[nodeFn[pathNode[p]]];
    wallByFile.set(f, (wallByFile.get(f) || 0) + pathCol.wall[p] + 1e-9 * pathCol.allocBytes[p]);
  }
  for (let f = 0; f < nF; f++) if (!wallByFile.has(fnFile[f])) wallByFile.set(fnFile[f], 0);
  [...wallByFile.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).forEach(([f], i) => fileOrder.set(f, i));
}

export { fileOrder, threadColour };
