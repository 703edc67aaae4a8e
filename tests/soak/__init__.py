"""The soak: `make run`'s processes (fake provider, API under gunicorn, RQ worker) on one
database, several simulated users working through the HTTP API as the SPA does, and
schemathesis `--checks all` against the same server, for a fixed time; then the checks of
DESIGN.md section 9 "real use": reads as fast after as before, the database pool back to 0
checked out, no 500 in the server's log or in any response.

stack.py starts and reads the processes, users.py is the simulated users, driver.py runs
the phases and measures. `make bench` (tests/bench/soak.py) runs a long one on SQLite and
PostgreSQL; tests/engine/test_soak.py a short one in each suite.
"""
