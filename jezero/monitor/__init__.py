"""Running unattended and failing loudly: whether each connector is alive (health.py), telling
someone when it is not (alerts.py), and the timer that runs it all (schedule.py). It reads what
the runner recorded in the store; the server's overview route and the app show the same health."""
