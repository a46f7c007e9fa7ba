// The one way the browser-driven checks start Chromium: which binary (ROKUPROF_CHROMIUM, else
// Debian's) and its flags (headless, no sandbox for root in CI, nothing that reaches the network
// on its own).
export const CHROMIUM = process.env.ROKUPROF_CHROMIUM || "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];
