"""What the pages about models share: the shipped models, a training run's progress, and the
model view panel of every head."""
