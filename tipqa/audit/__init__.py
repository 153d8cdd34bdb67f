"""How far a build's labels can be trusted: the audit, label flips, questions found verbatim.

The **audit** (`pool.audit_pool`) takes a seeded sample of a pool's unanswerable and discarded
questions and searches where the build did not (`relaxations`), judges only what the build
never judged, with the build's own judge, and estimates the share of each label that the corpus
answers after all, with an exact interval (`figures`). **Verbatim** counts (`verbatim`) say
which questions the corpus contains word for word. **Comparing** two builds of the same
questions (`compare`) lists every label that flipped and why.
"""
