// Colours: frames by source file, threads by name (a hash into a palette). Pure: the same file or
// thread name gets the same colour in every report and on the A/B page.

// Frames are coloured by source file: the hue (and a little of the saturation and lightness)
// is a hash of the file's name alone, so a file has the same colour in every report. Thread
// lanes on the timeline take these by a hash of the thread's name.
const PALETTE = [
  [214, 62, 70], [28, 80, 66], [145, 45, 62], [350, 60, 74], [265, 45, 74], [45, 78, 62],
  [188, 55, 60], [12, 62, 70], [95, 40, 62], [320, 40, 74], [230, 35, 72], [60, 50, 58],
];
function hsl(h, s, l) {
  return `hsl(${h} ${s}% ${l}%)`;
}
function hashString(text) {
  // FNV-1a over the UTF-16 code units
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}
function mix(h) {
  // a 32-bit finaliser: names that differ in a few characters get unrelated hues
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
function fileColour(file, name, dim) {
  const k = mix(hashString(file));
  const h = k % 360;
  if (dim) return hsl(h, 10, 90);
  const s = 52 + ((k >>> 9) % 3) * 8, l = 68 + ((k >>> 11) % 3) * 4;
  const shade = (hashString(name) % 7) - 3; // a little variation between a file's functions
  return hsl(h, s, l + shade);
}
// A thread's colour follows its name (a hash into the palette), never its position: a thread
// has the same colour in every report and on the A/B page. Two names of one page that hash to
// the same colour: the later one in name order takes the next colour that is free. threadColours
// (the names of a page's threads) gives the colour of a thread by its name.
function threadColours(names) {
  const threadSlot = new Map();
  const taken = new Set();
  for (const name of [...new Set(names)].sort()) {
    let k = mix(hashString(name)) % PALETTE.length;
    for (let i = 0; i < PALETTE.length && taken.has(k); i++) k = (k + 1) % PALETTE.length;
    taken.add(k);
    threadSlot.set(name, k);
  }
  return (name) => {
    const [h, s, l] = PALETTE[threadSlot.get(name) ?? mix(hashString(name)) % PALETTE.length];
    return hsl(h, s, l - 12);
  };
}

export { PALETTE, fileColour, hashString, hsl, mix, threadColours };
