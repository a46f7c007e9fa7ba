"""A Roku's well-known ports and the profiler stream's path: the one place they are written."""

#: ECP (External Control Protocol): device info, active app, launch, keypress.
ECP_PORT = 8060
#: The profiler stream (an HTTP GET of :data:`PROFILER_PATH`).
PROFILER_PORT = 8090
#: The debug console (``bsprof-status``, ``bsprof-pause``, ``bsprof-resume``).
CONSOLE_PORT = 8080
#: What the profiler stream serves: a running app's profile as it is written.
PROFILER_PATH = "/bsprof/channel.bsprof"
