"""A stand-in for the user's browser (``BROWSER="python fake_browser.py %s"``): records the address
it was asked to open in ``$FAKE_BROWSER_LOG``, then follows it as a browser would (the server
approves and redirects to the app's loopback listener)."""

from __future__ import annotations

import os
import sys

import httpx2

url = sys.argv[1]
with open(os.environ["FAKE_BROWSER_LOG"], "a", encoding="utf-8") as log:
    log.write(url + "\n")
httpx2.get(url, follow_redirects=True, timeout=10)
