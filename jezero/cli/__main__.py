from jezero.cli import main

main()
