// The page's globals (see main.js): its console API and the flag set once the first frame is drawn.
interface Window {
  __report: Record<string, unknown>;
  __reportReady: boolean;
}
