"""Operations over a source: export, repair, verify's counts, the records a followed file appends,
and the JSON reports of the passes."""
