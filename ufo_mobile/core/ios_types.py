"""The iOS accessibility element types the runtime needs to tell apart (WebDriverAgent's
``XCUIElementType`` names): shared by the iOS driver, which says WDA's tree in uiautomator's terms, and
the screen reading, which shows the types without their prefix and knows the text inputs."""

PREFIX = "XCUIElementType"
TEXT_INPUTS = frozenset({"TextField", "SecureTextField", "SearchField", "TextView"})
"""The types a user types into (``TextView`` is iOS's multi-line input, not Android's label)."""
