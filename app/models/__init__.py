"""Qt item models and the plain-Python state behind them: what the views show."""
