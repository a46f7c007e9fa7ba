"""Terminal renderings of core results (rich); no logic beyond presentation."""
