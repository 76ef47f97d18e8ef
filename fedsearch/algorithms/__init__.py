"""One folder per federated search algorithm: messages, party handlers, strategy, estimator."""
