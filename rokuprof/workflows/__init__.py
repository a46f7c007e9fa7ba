"""What rokuprof's commands do, end to end, as library calls: ``watch`` (a device's capture loop
with the view the caller chose), ``profile`` (package, install, capture, drive, exit), ``demo``
(``profile`` of the shipped sample app on a simulated Roku in-process) and ``pull`` (a local-mode
profile from the installer). Each joins the layers below it (device, capture, views, export,
store); the CLI only parses options and calls one of them, and no lower layer imports this one."""
