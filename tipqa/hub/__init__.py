"""Publishing a build: the Hub-ready folder, its dataset card, and the upload to the Hub."""
