"""Statistics shared by every stage that states a verdict: the search report, `benchmark`,
`compare`, the families' re-tests and the results scripts.

  significance  fixed-seed verdicts: cannot tell under 2 seeds, exact permutation / sign-flip
                tests up to 8 seeds, Welch / paired t beyond, Holm over a table, the interval
                over a fixed task set, the minimal detectable difference
  proportions   rates: the Wilson interval, Fisher's exact test
  sequential    decisions with seeds added in rounds: win, loss, equivalent within +-delta or
                cannot tell at the cap, valid under that optional stopping; its simulation

Distributions and standard tests are scipy.stats'; these modules hold the project's choices
around them. The bottom floor with `util`: it imports nothing else of the package.
"""
