"""Seconds from `python app.py` to the first finished translation through the API: python benchmarks/startup_time.py"""
import subprocess
import sys
import time

from gradio_client import Client

t0 = time.perf_counter()
proc = subprocess.Popen([sys.executable, "app.py", "--port", "7870"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    while True:
        try:
            client = Client("http://127.0.0.1:7870/", verbose=False)
            text = client.predict("A man rides a bike.", api_name="/translate")[0]
            break
        except Exception:  # not serving yet
            time.sleep(0.2)
    print(f"first translation {time.perf_counter() - t0:.1f} s after start: {text}")
finally:
    proc.terminate()
    proc.wait()
