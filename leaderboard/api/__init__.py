"""The REST API under /api/: the same reads as the pages (through leaderboard.selectors) and the same writes
(through the services), for people who upload and download by script."""
