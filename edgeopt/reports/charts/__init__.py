"""Chart layout helpers: text sizes, label placement without collisions, log axes, and the sweep's Pareto chart.

Leaf modules with no plotting library: :mod:`.text` estimates how wide a label is drawn, :mod:`.placer` puts labels
where they collide with nothing (or numbers the point and lists it beside the chart), :mod:`.scale` picks and ticks
a log axis when values span more than 10x, :mod:`.pareto` draws the sweep's frontier chart (issue 24).
"""
