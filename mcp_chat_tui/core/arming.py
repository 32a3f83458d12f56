"""How long a question that decides something waits before it takes an answer: the app's dialogs
(ui/screens/deciding.py) and the questions ``--plain`` asks on the terminal (cli/typed_lines.py).

Why half a second: a person reacts to something newly shown in about 0.2-0.25 s at best, and a
typist who means to stop still presses a key or two in the next 0.2 s (keys of a typing burst are
50-150 ms apart), so keys up to about 0.45 s after a question appeared can belong to what the
person was typing before; a pause that long ends a burst of typing. Reading a question and choosing
one of its answers takes longer than half a second, so a deliberate answer is never held back.
"""

ARMING_DELAY = 0.5  # seconds from a question's appearing (and from the last key typed) to its first answer
