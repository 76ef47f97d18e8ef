"""What the X-armed bandits share: the tree of boxes, node statistics, rewards, the estimator base."""
