"""Site-wide account plumbing with no model of its own: the cache table that login throttles share, and the
move of API tokens from DRF's plaintext table to django-rest-knox's hashed one."""
