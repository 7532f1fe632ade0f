#!/usr/bin/env python3
"""test_page.py OUT_DIR PAGE.html...: opens each page in headless Chromium over the DevTools
protocol and fails unless the page raises no script error and logs no console error, every
chart is drawn (its SVG holds lines or points, the crossover map coloured cells), clicking
the legend entry of a drawn series redraws its chart, and at phone width (390 px) nothing
but the tables' own scrollers is wider than the screen. A screenshot of each page, at desktop and phone
width, goes to OUT_DIR for the test log. Needs Debian's chromium and python3-websocket."""
import base64
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

# Runs in the page: what was drawn, and whether a legend click changes each chart.
CHECK = r"""
(() => {
  const charts = [...document.querySelectorAll("figure.chart")];
  const result = {charts: charts.length, empty: [], unchanged: [], toggled: 0};
  charts.forEach((figure, k) => {
    const svg = figure.querySelector(".plot svg");
    const drawn = svg ? svg.querySelectorAll("g.series path, g.series circle").length
                      : figure.querySelectorAll("table.map td[style]").length;
    if (!drawn) result.empty.push(k);
    const drawn_series = svg && svg.querySelector("g.series");  /* a series with points */
    const button = drawn_series && [...figure.querySelectorAll(".legend button")]
      .find(b => b.textContent === drawn_series.dataset.name);
    if (!svg || !button) return;
    const before = svg.outerHTML;
    button.click();
    const after = figure.querySelector(".plot svg").outerHTML;
    button.click();
    if (before === after) result.unchanged.push(k); else result.toggled++;
  });
  return result;
})()
"""

# The widest element, at phone width, that is not inside a horizontal scroller.
OVERFLOW = r"""
(() => [...document.querySelectorAll("main *")]
   .filter(e => !e.closest(".scroll, pre") && e.getBoundingClientRect().right > innerWidth + 1)
   .slice(0, 3).map(e => e.tagName + " " + Math.round(e.getBoundingClientRect().right)))()
"""


class Browser:
    def __init__(self, profile):
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if not exe:
            sys.exit("test_page.py: no chromium (apt-get install chromium)")
        self.process = subprocess.Popen(
            [exe, "--headless=new", "--disable-gpu", "--no-sandbox", "--no-first-run",
             "--remote-debugging-port=0", "--user-data-dir=" + profile, "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        port_file = pathlib.Path(profile, "DevToolsActivePort")
        for _ in range(300):
            if port_file.exists() and port_file.read_text().count("\n") >= 1:
                break
            time.sleep(0.1)
        port = port_file.read_text().split("\n")[0]
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port))
        page = next(t for t in targets if t["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError("%s: %s" % (method, message["error"]))
                return message["result"]
            self.events.append(message)

    def wait_for(self, method, seconds=60):
        end = time.time() + seconds
        while time.time() < end:
            if any(e.get("method") == method for e in self.events):
                return
            self.events.append(json.loads(self.socket.recv()))
        raise RuntimeError("no %s within %d s" % (method, seconds))

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(json.dumps(result["exceptionDetails"]))
        return result["result"]["value"]

    def errors(self):
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                out.append(details.get("exception", {}).get("description") or details.get("text"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                out.append(params["entry"]["text"])
        return out

    def screenshot(self, path, width):
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=900,
                  deviceScaleFactor=1, mobile=width < 600)
        height = min(6000, int(self.call("Page.getLayoutMetrics")["cssContentSize"]["height"]))
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self):
        """Ends the browser and its helper processes (renderer, zygote, crash handler), which
        may outlive it and still write to the profile as it is removed."""
        self.socket.close()
        self.process.terminate()
        self.process.wait()
        for sig in [signal.SIGKILL] + [0] * 100:
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break
            time.sleep(0.05)


def check_page(browser, page, out_dir):
    failures = []
    browser.events.clear()
    browser.call("Emulation.setDeviceMetricsOverride", width=1200, height=900, deviceScaleFactor=1,
                 mobile=False)
    browser.call("Page.navigate", url=pathlib.Path(page).resolve().as_uri())
    browser.wait_for("Page.loadEventFired")
    drawn = browser.evaluate(CHECK)
    if drawn["charts"] == 0:
        failures.append("no chart")
    if drawn["empty"]:
        failures.append("charts %s drawn empty" % drawn["empty"])
    if drawn["unchanged"] or drawn["toggled"] == 0:
        failures.append("a legend click left charts %s as they were" % drawn["unchanged"])
    name = pathlib.Path(page).stem
    browser.screenshot(out_dir / (name + ".png"), 1200)
    browser.screenshot(out_dir / (name + "-phone.png"), 390)
    wide = browser.evaluate(OVERFLOW)
    if wide:
        failures.append("wider than a 390 px screen: %s" % wide)
    failures += ["script error: %s" % e for e in browser.errors()]
    print("%s: %d charts drawn, %d redrawn by a legend click; screenshots %s/%s.png, %s-phone.png; %s"
          % (page, drawn["charts"], drawn["toggled"], out_dir, name, name,
             "FAILED: " + "; ".join(failures) if failures else "ok"))
    return not failures


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: test_page.py OUT_DIR PAGE.html...")
    out_dir = pathlib.Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        browser = Browser(profile)
        try:
            for domain in ("Runtime", "Log", "Page"):
                browser.call(domain + ".enable")
            ok = [check_page(browser, page, out_dir) for page in sys.argv[2:]]
        finally:
            browser.close()
    print("test-report: %d passed, %d failed" % (ok.count(True), ok.count(False)))
    sys.exit(0 if all(ok) else 1)


if __name__ == "__main__":
    main()
