/*CONFIG*/null
