"""One module per kind of Slack input: the slash command, button presses, thread messages."""
