"""Load and soak: our chat server against ADK's api_server under locust (issue 14 item 7).

    .venv/bin/python -m bench.soak --duration 300

See `bench/soak/run.py` (the run) and `bench/soak/locustfile.py` (the users).
"""
