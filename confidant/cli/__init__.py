"""`confidant`: the command line of a Confidant server (chat, sessions; more plug in)."""
