#!/usr/bin/env python3
"""The inspector's page in a real browser (headless Chromium through Selenium).

Starts the demo backend and `storechain inspect` over the Bandcamp example's v2 pipeline,
loads the page, and checks what a user sees: the pipeline's handlers, a cold fetch (a miss,
its pages and HTTP exchanges in the waterfall), the same fetch warm (a hit, no exchange), an
entity forgotten in one cache, the caches emptied from the page (the next fetch goes upstream
again), the live request list (a request in it opens its waterfall), the rate limiter, a save the
outbox held while the backend was down retried from the page until the backend has it, and that
an action without the run's token is refused. Saves the cold and warm screenshots.

    python3 Tests/Browser/inspector_test.py .build/debug/storechain [SCREENSHOT_DIR]
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def start(command, env=None):
    """Starts a server that prints its address on its first line; returns (process, address)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        match = re.search(r"http://127\.0\.0\.1:\d+", line)
        if match:
            return process, match.group(0)
    process.kill()
    raise SystemExit(f"{command[1]} printed no address: {process.stdout.read()}")


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def main():
    binary = os.path.abspath(sys.argv[1])
    shots = sys.argv[2] if len(sys.argv) > 2 else None
    work = tempfile.mkdtemp(prefix="storechain-inspector-")
    shutil.copy(os.path.join(ROOT, "Examples", "Bandcamp", "music.model.yml"), work)
    with open(os.path.join(ROOT, "Examples", "Bandcamp", "v2.pipeline.yml")) as source:
        # A disk cache of this run's own, not one another run left behind.
        pipeline = source.read().replace("path: cache/v2.sqlite", f"path: {work}/v2.sqlite")
    # An outbox after the disk cache, holding a save made while the backend was down.
    pipeline = re.sub(r"(\n  - disk-cache:[^\n]*)", f"\\1\n  - outbox: {{ path: {work}/outbox.sqlite, retry-delay: 1h }}", pipeline)
    check("- outbox:" in pipeline, "the pipeline copy has an outbox")
    pipeline_path = os.path.join(work, "v2.pipeline.yml")
    with open(pipeline_path, "w") as copy:
        copy.write(pipeline)
    with socket.socket() as closed:  # a port nothing listens on: the backend is down
        closed.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{closed.getsockname()[1]}"
    held = subprocess.run(
        [binary, "save", "--pipeline", pipeline_path, "--entity", "Band", "--insert", '{"name": "Inspector pending"}'],
        env=dict(os.environ, STORECHAIN_DEMO_URL=down), capture_output=True, text=True, timeout=60)
    check(held.returncode == 0 and '"state": "pending"' in held.stdout, f"a save held while down: {held.stdout} {held.stderr}")
    demo, demo_url = start([binary, "serve-demo", "--port", "0"])
    env = dict(os.environ, STORECHAIN_DEMO_URL=demo_url)
    inspector, url = start([binary, "inspect", "--pipeline", pipeline_path, "--port", "0"], env)
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1100"):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    # The outbox and rate-limit panels redraw every 2 s, the caches after each query: an element
    # found before a redraw is stale after it, so waits retry on that, and texts are read in one script (find and read at once).
    wait = WebDriverWait(browser, 30, ignored_exceptions=(StaleElementReferenceException,))

    def texts(selector):
        return browser.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0]), e => e.innerText)", selector)

    def click(selector):
        wait.until(lambda b: b.find_element(By.CSS_SELECTOR, selector).click() or True)
    try:
        browser.get(url)
        wait.until(lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")

        stages = [e.get_attribute("data-type") for e in browser.find_elements(By.CSS_SELECTOR, "#pipeline .stage")]
        check(stages[:3] == ["logging", "memory-cache", "disk-cache"] and stages[-1] == "remote", f"pipeline: {stages}")
        browser.find_element(By.CSS_SELECTOR, '#pipeline .stage[data-type="pagination"]').click()
        check("page-size: 50" in browser.find_element(By.ID, "stage-options").text, "a stage shows its options")

        # The save held while the backend was down, retried from the page before any request passes
        # the outbox (which would send it on its own); the last query finds it at the backend.
        entry = '#outbox li[data-state="pending"]'
        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, entry))
        check(any("Inspector pending" in text for text in texts(entry)), f"the held save shows its changes: {texts(entry)}")
        click(entry + " button.retry")
        wait.until(lambda b: "was sent" in b.find_element(By.ID, "outbox-message").text)
        wait.until(lambda b: not b.find_elements(By.CSS_SELECTOR, entry))

        def run(expect_status):
            summary = browser.find_element(By.ID, "summary")
            before = summary.text
            browser.find_element(By.ID, "run").click()
            wait.until(lambda b: summary.text and summary.text != before or summary.get_attribute("data-status") == expect_status and summary.text)
            try:
                wait.until(lambda b: summary.get_attribute("data-status") == expect_status)
            except Exception:
                raise AssertionError(f"expected {expect_status}: {summary.text} ({summary.get_attribute('data-status')})")
            return summary

        browser.find_element(By.ID, "entity").send_keys("Album")
        browser.find_element(By.ID, "predicate").send_keys("year >= 2000")
        browser.find_element(By.ID, "sort").send_keys("title")
        browser.find_element(By.ID, "limit").send_keys("10")

        summary = run("miss")
        rows = browser.find_elements(By.CSS_SELECTOR, "#results tr")
        check(len(rows) == 11, f"cold: 10 rows and a header, got {len(rows)}")
        cold_titles = [r.text for r in rows[1:]]
        exchanges = int(summary.get_attribute("data-exchanges"))
        http = browser.find_elements(By.CSS_SELECTOR, '#waterfall li[data-kind="http"]')
        check(exchanges > 0 and len(http) == exchanges, f"cold: {exchanges} exchanges, {len(http)} shown")
        check("→ 200" in http[0].text and "/v2/albums" in http[0].text, f"an exchange shows its URL and status: {http[0].text}")
        requests = browser.find_elements(By.CSS_SELECTOR, '#waterfall li[data-kind="request"]')
        steps = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#waterfall li")]
        check(sum("page" in step for step in steps) >= exchanges, f"cold: each page is a step of its own: {steps}")
        check(any(r.get_attribute("data-status") == "miss" for r in requests), "cold: the caches missed")
        check(browser.find_elements(By.CSS_SELECTOR, "#explanation li"), "the planner's choice is shown")
        if shots:
            os.makedirs(shots, exist_ok=True)
            browser.save_screenshot(os.path.join(shots, "inspector-cold.png"))

        summary = run("hit")
        rows = browser.find_elements(By.CSS_SELECTOR, "#results tr")
        check([r.text for r in rows[1:]] == cold_titles, "warm: the same answer")
        check(summary.get_attribute("data-exchanges") == "0", "warm: no HTTP exchange")
        check(not browser.find_elements(By.CSS_SELECTOR, '#waterfall li[data-kind="http"]'), "warm: no exchange shown")
        if shots:
            browser.save_screenshot(os.path.join(shots, "inspector-warm.png"))

        # Forget one entity in one cache: its row goes, the next fetch is answered by the next cache.
        memory_album = '#caches [data-cache="memory-cache"] tr[data-entity="Album"]'
        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, memory_album))
        click(memory_album + " button.forget")
        wait.until(lambda b: not b.find_elements(By.CSS_SELECTOR, memory_album))
        check("memory-cache: forgot" in browser.find_element(By.ID, "cache-message").text, "forgetting says what it did")
        check(browser.find_elements(By.CSS_SELECTOR, '#caches [data-cache="disk-cache"] tr[data-entity="Album"]'),
              "the disk cache still holds the albums")
        summary = run("hit")
        check(summary.get_attribute("data-exchanges") == "0" and "answered by disk-cache" in summary.text,
              f"after forgetting in memory, the disk cache answers: {summary.text}")

        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, '#caches [data-cache="memory-cache"] tr[data-entity="Album"]'))
        browser.find_element(By.ID, "clear-all").click()
        wait.until(lambda b: not b.find_elements(By.CSS_SELECTOR, '#caches tr[data-entity="Album"]'))
        summary = run("miss")
        check(int(summary.get_attribute("data-exchanges")) > 0, "after clearing the caches the fetch goes upstream")

        wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#requests li.traced")) >= 4)
        browser.find_elements(By.CSS_SELECTOR, "#requests li.traced")[-1].click()
        check(browser.find_elements(By.CSS_SELECTOR, '#waterfall li[data-kind="http"]'),
              "a request from the list opens its waterfall (the first, cold one)")

        limiter = texts('#rate-limits tr[data-limiter="rate-limit"]')
        check(limiter and "40/s" in limiter[0], f"the rate limiter's state: {limiter}")

        for field, text in (("entity", "Band"), ("predicate", "name BEGINSWITH 'Inspector pending'"), ("sort", ""), ("limit", "")):
            browser.find_element(By.ID, field).clear()
            if text:
                browser.find_element(By.ID, field).send_keys(text)
        browser.find_element(By.CSS_SELECTOR, '#policy option[value="reload"]').click()
        run("bypassed")
        rows = browser.find_elements(By.CSS_SELECTOR, "#results tr")
        check(len(rows) == 2 and "Inspector pending" in rows[1].text, f"the backend has the retried save: {[r.text for r in rows]}")

        refused = urllib.request.Request(url + "/api/caches/clear", data=b"{}", method="POST")
        try:
            urllib.request.urlopen(refused)
            raise AssertionError("a POST without the token was accepted")
        except urllib.error.HTTPError as error:
            check(error.code == 403, f"a POST without the token: {error.code}")
            check("X-StoreChain-Token" in json.loads(error.read())["error"], "the refusal says what is missing")
        print("inspector page: pipeline, cold and warm fetch, an entity forgotten, caches cleared, live requests,"
              " rate limiter, outbox retry, token: all as expected")
    finally:
        browser.quit()
        inspector.terminate()
        demo.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
