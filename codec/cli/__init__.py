"""``tfrlens-cli``: the command line over the codec. The library never imports this package."""
