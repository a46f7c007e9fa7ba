// Drives real Roku clients (their published npm packages, as package.json pins them) against
// one device: `node roku_clients.mjs CONFIG.json`. CONFIG names the node_modules directory to
// load the clients from, the host and ports (every client here takes its ports as options, so
// nothing needs the standard 80/8060/8080), the developer password and the app packages.
// Prints one JSON line per call, in order: {"call", "ok", "value"} or {"call", "ok": false,
// "error"}; the Python test (tests/test_real_clients.py) judges each value. A call that never
// answers is cut by its own timeout (every client call below has one) or by the test's.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const require = createRequire(join(config.nodeModules, 'noop.js'));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);

const deployModule = await load('roku-deploy');
const { SceneGraphDebugCommandController } = await load(
  'roku-debug/dist/SceneGraphDebugCommandController.js',
);
const { ChanperfTracker } = await load('roku-debug/dist/ChanperfTracker.js');
const ecp = await load('@dlenroc/roku-ecp');
const debugServer = await load('@dlenroc/roku-debug-server');
const developerServer = await load('@dlenroc/roku-developer-server');

const rokuDeploy = new (deployModule.RokuDeploy ?? deployModule.default.RokuDeploy)();
const host = config.host;
const deployOptions = {
  host,
  password: config.password,
  packagePort: config.installer,
  remotePort: config.ecp,
  timeout: 10000,
};

async function call(name, fn) {
  try {
    const value = await fn();
    process.stdout.write(JSON.stringify({ call: name, ok: true, value: value ?? null }) + '\n');
  } catch (error) {
    const text = `${error?.constructor?.name ?? 'Error'}: ${error?.message ?? error}`;
    process.stdout.write(JSON.stringify({ call: name, ok: false, error: text }) + '\n');
  }
}

const withTimeout = () => ({ signal: AbortSignal.timeout(10000) });
const console8080 = () => new SceneGraphDebugCommandController(host, config.console);
const ecpCtx = new ecp.ECPExecutor({ address: `http://${host}:${config.ecp}` });
const debugCtx = new debugServer.DebugServerExecutor({ hostname: host, port: config.console });
const devCtx = new developerServer.DeveloperServerExecutor({
  address: `http://${host}:${config.installer}`,
  username: 'rokudev',
  password: config.password,
});

// roku-deploy: the password check, device info, sideloading (deploy and publish).
await call('roku-deploy validateDeveloperPassword', () =>
  rokuDeploy.validateDeveloperPassword({ host, port: config.installer, password: config.password }),
);
await call('roku-deploy validateDeveloperPassword (wrong password)', () =>
  rokuDeploy.validateDeveloperPassword({ host, port: config.installer, password: 'wrong' }),
);
await call('roku-deploy getDeviceInfo', () => rokuDeploy.getDeviceInfo(deployOptions));
await call('roku-deploy deploy', async () => {
  const result = await rokuDeploy.deploy({
    ...deployOptions,
    rootDir: config.appDir,
    outDir: config.outDir,
    outFile: 'app',
    retainStagingDir: false,
  });
  return result.message;
});
await call('roku-deploy publish (no manifest)', async () => {
  const result = await rokuDeploy.publish({
    ...deployOptions,
    outDir: config.outDir,
    outFile: config.noManifestZip,
  });
  return result.message;
});

// roku-debug (behind the VS Code BrightScript extension): the console and its chanperf parser.
for (const option of ['status', 'pause', 'resume']) {
  await call(`roku-debug bsprof ${option}`, async () => {
    const response = await console8080().bsprof(option);
    if (response.error) throw response.error;
    return response.result.rawResponse;
  });
}
let chanperfLine = '';
await call('roku-debug chanperf', async () => {
  const response = await console8080().chanperf();
  if (response.error) throw response.error;
  chanperfLine = response.result.rawResponse;
  return chanperfLine;
});
await call('roku-debug ChanperfTracker', () => {
  const tracker = new ChanperfTracker();
  tracker.processLog(chanperfLine);
  const event = tracker.getHistory.at(-1);
  if (!event) throw new Error(`no chanperf event in ${JSON.stringify(chanperfLine)}`);
  return event;
});

// @dlenroc/roku-debug-server (behind the Appium Roku driver): the same console.
await call('debug-server getProfilingStatus', () =>
  debugServer.getProfilingStatus(debugCtx, withTimeout()),
);
await call('debug-server pauseProfiling', () => debugServer.pauseProfiling(debugCtx, withTimeout()));
await call('debug-server resumeProfiling', () =>
  debugServer.resumeProfiling(debugCtx, withTimeout()),
);
await call('debug-server getChannelPerformanceStats', () =>
  debugServer.getChannelPerformanceStats(debugCtx, withTimeout()),
);

// @dlenroc/roku-ecp: queries, keys, exit and launch.
await call('roku-ecp queryDeviceInfo', () => ecp.queryDeviceInfo(ecpCtx, withTimeout()));
await call('roku-ecp queryApps', () => ecp.queryApps(ecpCtx, withTimeout()));
await call('roku-ecp queryActiveApp', () => ecp.queryActiveApp(ecpCtx, withTimeout()));
await call('roku-ecp queryAppState', () => ecp.queryAppState(ecpCtx, { appId: 'dev' }, withTimeout()));
await call('roku-ecp queryMediaPlayer', () => ecp.queryMediaPlayer(ecpCtx, withTimeout()));
await call('roku-ecp keypress', () => ecp.keypress(ecpCtx, { key: 'Select' }, withTimeout()));
await call('roku-ecp exitApp', () => ecp.exitApp(ecpCtx, { appId: 'dev' }, withTimeout()));
await call('roku-ecp queryAppState (after exit)', () =>
  ecp.queryAppState(ecpCtx, { appId: 'dev' }, withTimeout()),
);

// @dlenroc/roku-developer-server: the profile the exited run kept, an install, and what a
// profiler's device refuses.
await call('developer-server saveProfilingData', () =>
  developerServer.saveProfilingData(devCtx, withTimeout()),
);
await call('developer-server installChannel', () =>
  developerServer.installChannel(
    devCtx,
    { content: readFileSync(config.secondZip) },
    withTimeout(),
  ),
);
await call('roku-ecp launch', () => ecp.launch(ecpCtx, { appId: 'dev' }, withTimeout()));
await call('developer-server takeScreenshot', () =>
  developerServer.takeScreenshot(devCtx, withTimeout()),
);
await call('developer-server packageChannel', () =>
  developerServer.packageChannel(
    devCtx,
    { name: 'App/1.0', password: 'secret', timestamp: 0 },
    withTimeout(),
  ),
);
await call('developer-server rekey', () =>
  developerServer.rekey(
    devCtx,
    { content: readFileSync(config.secondZip), password: 'secret' },
    withTimeout(),
  ),
);

// roku-deploy again: what it asks of a device beyond sideloading.
await call('roku-deploy takeScreenshot', () =>
  rokuDeploy.takeScreenshot({ ...deployOptions, outDir: config.outDir }),
);
await call('roku-deploy rekeyDevice', () =>
  rokuDeploy.rekeyDevice({
    ...deployOptions,
    rootDir: config.outDir,
    rekeySignedPackage: config.secondZip,
    signingPassword: 'secret',
  }),
);
await call('roku-deploy signExistingPackage', () =>
  rokuDeploy.signExistingPackage({
    ...deployOptions,
    stagingDir: config.appDir,
    signingPassword: 'secret',
  }),
);
await call('roku-deploy getDevId', () => rokuDeploy.getDevId(deployOptions));
await call('roku-deploy pressHomeButton', async () => {
  await rokuDeploy.pressHomeButton(host, config.ecp, 10000);
  return 'pressed';
});
await call('developer-server deleteChannel', () =>
  developerServer.deleteChannel(devCtx, withTimeout()),
);
