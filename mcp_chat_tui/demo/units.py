"""Unit conversion for the demo server: linear units by factor, temperatures by formula."""

from __future__ import annotations

# Each unit: (dimension, factor to the dimension's base unit).
_LINEAR: dict[str, tuple[str, float]] = {
    "m": ("length", 1.0),
    "km": ("length", 1000.0),
    "cm": ("length", 0.01),
    "mm": ("length", 0.001),
    "mi": ("length", 1609.344),
    "yd": ("length", 0.9144),
    "ft": ("length", 0.3048),
    "in": ("length", 0.0254),
    "kg": ("mass", 1.0),
    "g": ("mass", 0.001),
    "mg": ("mass", 1e-6),
    "lb": ("mass", 0.45359237),
    "oz": ("mass", 0.028349523125),
    "t": ("mass", 1000.0),
    "l": ("volume", 1.0),
    "ml": ("volume", 0.001),
    "gal": ("volume", 3.785411784),
    "cup": ("volume", 0.2365882365),
    "m/s": ("speed", 1.0),
    "km/h": ("speed", 1 / 3.6),
    "mph": ("speed", 0.44704),
    "kn": ("speed", 0.514444),
}
_ALIASES = {
    "meter": "m",
    "meters": "m",
    "metre": "m",
    "metres": "m",
    "kilometer": "km",
    "kilometers": "km",
    "kilometre": "km",
    "kilometres": "km",
    "centimeter": "cm",
    "centimeters": "cm",
    "millimeter": "mm",
    "millimeters": "mm",
    "mile": "mi",
    "miles": "mi",
    "yard": "yd",
    "yards": "yd",
    "foot": "ft",
    "feet": "ft",
    "inch": "in",
    "inches": "in",
    "kilogram": "kg",
    "kilograms": "kg",
    "kilo": "kg",
    "kilos": "kg",
    "gram": "g",
    "grams": "g",
    "milligram": "mg",
    "pound": "lb",
    "pounds": "lb",
    "lbs": "lb",
    "ounce": "oz",
    "ounces": "oz",
    "tonne": "t",
    "tonnes": "t",
    "liter": "l",
    "liters": "l",
    "litre": "l",
    "litres": "l",
    "milliliter": "ml",
    "milliliters": "ml",
    "gallon": "gal",
    "gallons": "gal",
    "cups": "cup",
    "kph": "km/h",
    "kmh": "km/h",
    "knot": "kn",
    "knots": "kn",
    "celsius": "c",
    "°c": "c",
    "fahrenheit": "f",
    "°f": "f",
    "kelvin": "k",
}
_TEMPERATURE = {"c", "f", "k"}


def _canonical(unit: str) -> str:
    name = unit.strip().lower()
    return _ALIASES.get(name, name)


def _to_celsius(value: float, unit: str) -> float:
    return {"c": value, "f": (value - 32) * 5 / 9, "k": value - 273.15}[unit]


def _from_celsius(value: float, unit: str) -> float:
    return {"c": value, "f": value * 9 / 5 + 32, "k": value + 273.15}[unit]


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert ``value``; raises ValueError naming the unit it does not know or the mismatch."""
    source, target = _canonical(from_unit), _canonical(to_unit)
    if source in _TEMPERATURE and target in _TEMPERATURE:
        return _from_celsius(_to_celsius(value, source), target)
    for unit, original in ((source, from_unit), (target, to_unit)):
        if unit not in _LINEAR and unit not in _TEMPERATURE:
            known = ", ".join(sorted(set(_LINEAR) | _TEMPERATURE))
            raise ValueError(f"unknown unit {original!r}; known units: {known}")
    source_dim = "temperature" if source in _TEMPERATURE else _LINEAR[source][0]
    target_dim = "temperature" if target in _TEMPERATURE else _LINEAR[target][0]
    if source_dim != target_dim:
        raise ValueError(f"cannot convert {source_dim} ({from_unit}) to {target_dim} ({to_unit})")
    return value * _LINEAR[source][1] / _LINEAR[target][1]
