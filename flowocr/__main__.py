from flowocr.cli import main

main()
