"""The capture daemon: config file, one capture loop per device, discovery, the spool uploader,
retention, sd_notify, metrics and logs (an asyncio shell over the capture and store layers)."""
