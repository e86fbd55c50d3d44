"""Data, the learning-rate schedule, training, evaluation, toy tasks and snapshots."""
