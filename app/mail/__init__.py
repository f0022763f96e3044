"""Outgoing e-mail: the SMTP client (or the development log sink) and the Celery task
names that send it. Messages are composed by the feature that owns them (accounts,
metering) and sent from a worker, never from a request."""
