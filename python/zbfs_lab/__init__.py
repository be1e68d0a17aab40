"""zbfs-lab: run matrices of zbfs experiments and turn their JSON records into figures and tables."""

__version__ = "0.1.0"
