// Parse a trace with Chrome DevTools' trace engine (npm @paulirish/trace_engine) and print what it
// understood as JSON: per thread its name, its entries (name, ph, ts, dur, args, depth in the
// engine's own call tree), the CPU profiles it modelled (samples, timestamps, nodes, profile
// calls; a .cpuprofile becomes one) and the counters.
//
//   node tests/viewers/trace_engine.mjs FILE [--cpuprofile]  > parsed.json
//
// The engine does not throw on bad events (it drops or keeps them as they are), so the caller
// compares these entries with what it wrote. Exit 1 only when the file is not JSON or the
// engine itself fails.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

// The engine measures layout with DOMRect, which Node does not have.
globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) {
    Object.assign(this, { x, y, width, height, top: y, left: x, right: x + width, bottom: y + height });
  }
};

const require = createRequire(import.meta.url);
const root = path.dirname(require.resolve("@paulirish/trace_engine/package.json"));
const Trace = await import(pathToFileURL(path.join(root, "models/trace/trace.js")).href);

function depths(tree) {
  // The engine's call tree: entry -> depth (0 for a root).
  const out = new Map();
  if (!tree) return out;
  const stack = [...(tree.roots || [])].map((node) => [node, 0]);
  while (stack.length) {
    const [node, depth] = stack.pop();
    out.set(node.entry, depth);
    for (const child of node.children || []) stack.push([child, depth + 1]);
  }
  return out;
}

function entry(e, depth) {
  const out = { name: e.name, ph: e.ph, ts: e.ts, dur: e.dur ?? null, args: e.args ?? {} };
  if (depth !== undefined) out.depth = depth;
  if (e.callFrame) {
    out.callFrame = {
      functionName: e.callFrame.functionName,
      url: e.callFrame.url,
      lineNumber: e.callFrame.lineNumber,
    };
  }
  return out;
}

async function main() {
  const [file, ...flags] = process.argv.slice(2);
  const isCPUProfile = flags.includes("--cpuprofile");
  const json = JSON.parse(readFileSync(file, "utf8"));
  const fake = isCPUProfile
    ? Trace.Helpers.SamplesIntegrator.SamplesIntegrator.createFakeTraceFromCpuProfile(json, 1)
    : null;
  const events = fake ? fake.traceEvents : (json.traceEvents ?? json);
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(events, { isCPUProfile, metadata: fake ? fake.metadata : {} });
  const parsed = model.parsedTrace();
  const data = parsed.data ?? parsed;
  const threads = [];
  for (const [pid, proc] of data.Renderer.processes) {
    for (const [tid, thread] of proc.threads) {
      const depth = depths(thread.tree);
      threads.push({
        pid,
        tid,
        name: thread.name ?? null,
        entries: (thread.entries || []).map((e) => entry(e, depth.get(e))),
        profileCalls: (thread.profileCalls || []).map((e) => entry(e, depth.get(e))),
      });
    }
  }
  // CPU profiles (a .cpuprofile, or ProfileChunk events): the engine's own model of each.
  const profiles = [];
  for (const [pid, byThread] of data.Samples?.profilesInProcess ?? []) {
    for (const [tid, profile] of byThread) {
      const model = profile.parsedProfile;
      const nodes = [];
      const stack = model.root ? [[model.root, null]] : [];
      while (stack.length) {
        const [node, parent] = stack.pop();
        const frame = node.callFrame;
        nodes.push({
          id: node.id,
          parent,
          functionName: frame.functionName,
          url: frame.url,
          lineNumber: frame.lineNumber,
        });
        for (const child of node.children || []) stack.push([child, node.id]);
      }
      profiles.push({
        pid,
        tid,
        startTime: model.profileStartTime,
        endTime: model.profileEndTime,
        samples: Array.from(model.samples ?? []),
        timestamps: Array.from(model.timestamps ?? []),
        nodes,
        profileCalls: profile.profileCalls.map((e) => entry(e)),
      });
    }
  }
  const counters = (parsed.traceEvents || [])
    .filter((e) => e.ph === "C")
    .map((e) => ({ name: e.name, ts: e.ts, pid: e.pid, tid: e.tid, args: e.args ?? {} }));
  const bounds = data.Meta?.traceBounds;
  process.stdout.write(
    `${JSON.stringify({
      events: events.length,
      threads,
      profiles,
      counters,
      traceBounds: bounds ? { min: bounds.min, max: bounds.max, range: bounds.range } : null,
    })}\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`trace_engine.mjs: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
