"""A Roku's well-known ports and the profiler stream's path: the one place they are written."""

#: ECP (External Control Protocol): device info, active app, launch, keypress.
ECP_PORT = 8060
#: The profiler stream (an HTTP GET of :data:`PROFILER_PATH`).
PROFILER_PORT = 8090
#: The debug console (``bsprof-status``, ``bsprof-pause``, ``bsprof-resume``).
CONSOLE_PORT = 8080
#: What the profiler stream serves: a running app's profile as it is written.
PROFILER_PATH = "/bsprof/channel.bsprof"
#: The Application Installer (developer web UI): sideloading and local-mode profiles.
INSTALLER_PORT = 80
#: The installer's HTTP Digest user (the password is the one set in developer mode).
INSTALLER_USER = "rokudev"
#: The environment variable the developer password is read from.
PASSWORD_VARIABLE = "ROKU_DEV_PASSWORD"
#: Where ``plugin_inspect`` offers a local-mode profile.
LOCAL_PROFILE_PATH = "/pkgs/channel.bsprof"
#: ``rokuprof control``'s actions and the console command each sends.
CONSOLE_ACTIONS = {
    "status": "bsprof-status",
    "pause": "bsprof-pause",
    "resume": "bsprof-resume",
    "chanperf": "chanperf",
}
