"""Slack adapter: the Bolt app, its handlers, Block Kit rendering, escaping, the HTTP server, the console.

May import every core part and the store; nothing in the core imports it.
"""
