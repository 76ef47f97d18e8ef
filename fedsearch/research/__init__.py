"""Research tools, not part of the estimators' face: the papers' synthetic objectives and parties
(:mod:`.synthetic`), ``simulate`` with regret traces (:mod:`.simulate`), and regret metrics
(:mod:`.metrics`). Nothing in the rest of the package imports this."""
