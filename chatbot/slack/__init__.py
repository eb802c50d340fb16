"""Slack adapter: the Bolt app, its handlers, Block Kit rendering, the HTTP server and the console."""
